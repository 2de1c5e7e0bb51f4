"""A LangChain pipeline as a Python-system target (extra ``snapaudit[langchain]``).

``langchain_target(build)`` is the target a protocol names (``target = "pipeline:answer"``
with ``answer = langchain_target(build)`` in ``pipeline.py``): ``build(**kwargs)`` (the
state's ``kwargs``, e.g. ``index = "v1"``) returns a runnable, built once per distinct kwargs;
each call invokes it on the question (``chain.invoke(question)``, or ``{input_key:
question}``) and returns ``{"answer", "doc_ids"}``:

* the answer: the runnable's output, a ``str``, an ``AIMessage`` or a mapping with
  ``"answer"`` (:func:`snapaudit.adapters.common.answer_text`);
* the document ids: the output's ``"context"`` documents when it is a mapping that has them
  (``create_retrieval_chain``), else the documents every retriever in the chain returned
  during the call (a callback handler collects them), as ``Document.id`` or
  ``metadata[id_key]``; a ``None`` id is refused, never replaced, as soon as the retriever
  returns it (the handler raises, so the chain stops before its LLM is called: a
  :class:`DocIdError` costs no model call, and it stops the run at once);
* the seed: LCEL ``chain.invoke`` takes no per-call seed, so the LLM step of the chain is
  :func:`seeded_llm` (``llm.bind(seed=call.seed)`` at each call). :func:`rag_chain` builds
  the usual retriever | prompt | LLM chain with it.

``langchain_target(build, asynchronous=True)`` is an ``async def`` target using ``ainvoke``.
A ``langchain_community.llms.LlamaCpp`` model is called under its one lock (two threads in one
llama.cpp model abort the process) with its prompt cache reset, so the same prompt and seed
give the same answer; the async path runs it in a worker thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any

from snapaudit.adapters.common import (
    DocIdError,
    current_seed,
    doc_ids,
    is_llama,
    make_target,
    model_lock,
    require,
    reset_llama,
    result,
)
from snapaudit.systems.python import PythonCall

EXTRA = "langchain"


def _lc(module: str) -> Any:
    return require(f"langchain_core.{module}", EXTRA)


def config_seed(config: Any) -> int | None:
    """The seed a target put in a run's ``config["configurable"]``, else the current seed."""
    configurable = (config or {}).get("configurable") or {}
    seed = configurable.get("snapaudit_seed")
    return seed if isinstance(seed, int) else current_seed()


def seeded_llm(llm: Any, *, seed_kwarg: str = "seed") -> Any:
    """A runnable calling ``llm.bind(**{seed_kwarg: seed})`` with the current call's seed (the
    LLM's own settings when there is none); a llama.cpp ``LlamaCpp`` under its model lock,
    its prompt cache reset before each call."""
    runnables = _lc("runnables")
    client = getattr(llm, "client", None)
    native = is_llama(client)

    def bound(config: Any) -> Any:
        seed = config_seed(config)
        return llm if seed is None else llm.bind(**{seed_kwarg: seed})

    def invoke(value: Any, config: Any) -> Any:
        if not native:
            return bound(config).invoke(value, config)
        with model_lock(client):
            reset_llama(client)
            return bound(config).invoke(value, config)

    async def ainvoke(value: Any, config: Any) -> Any:
        if native:  # llama.cpp is blocking: a worker thread, never the event loop
            return await asyncio.to_thread(invoke, value, config)
        return await bound(config).ainvoke(value, config)

    return runnables.RunnableLambda(invoke, afunc=ainvoke, name="seeded_llm")


def format_documents(docs: Sequence[Any]) -> str:
    """The retrieved documents as prompt context: one ``[n] text`` line each."""
    return "\n".join(f"[{i}] {d.page_content}" for i, d in enumerate(docs, 1))


def rag_chain(retriever: Any, prompt: Any, llm: Any, *, seed_kwarg: str = "seed",
              format_docs: Callable[[Sequence[Any]], str] = format_documents) -> Any:
    """``{"context": retriever | format_docs, "question": passthrough} | prompt |
    seeded_llm(llm)``: the prompt takes ``{context}`` and ``{question}``."""
    runnables = _lc("runnables")
    return ({"context": retriever | runnables.RunnableLambda(format_docs),
             "question": runnables.RunnablePassthrough()}
            | prompt | seeded_llm(llm, seed_kwarg=seed_kwarg))


@cache
def _collector_class() -> type[Any]:
    base = _lc("callbacks").BaseCallbackHandler

    class DocumentCollector(base):  # type: ignore[misc, valid-type]
        """Collects the documents every retriever of one call returns, in order; a document
        without a stable id raises there (``raise_error``: the chain stops before its LLM)."""

        run_inline = True
        raise_error = True

        def __init__(self, id_key: str | None) -> None:
            super().__init__()
            self.documents: list[Any] = []
            self.seen = False
            self.id_key = id_key

        def on_retriever_end(self, documents: Sequence[Any], **kwargs: Any) -> None:
            self.seen = True
            doc_ids(documents, self.id_key)  # DocIdError now, not after the LLM's answer
            self.documents.extend(documents)

    return DocumentCollector


def _invocation(call: PythonCall, input_key: str | None,
                id_key: str | None) -> tuple[Any, Any, dict[str, Any]]:
    collector = _collector_class()(id_key)
    config = {"callbacks": [collector], "configurable": {"snapaudit_seed": call.seed},
              "run_name": f"snapaudit {call.question_id}",
              "metadata": {"snapaudit_question_id": call.question_id,
                           "snapaudit_state": call.state, "snapaudit_repeat": call.repeat}}
    value = call.question if input_key is None else {input_key: call.question}
    return value, collector, config


def _result(output: Any, collector: Any, id_key: str | None) -> dict[str, Any]:
    items = None
    if isinstance(output, dict) and isinstance(output.get("context"), list):
        items = output["context"]
    elif collector.seen:
        items = collector.documents
    return result(output, items, id_key)


def langchain_target(build: Callable[..., Any], *, id_key: str | None = None,
                     input_key: str | None = None,
                     asynchronous: bool = False) -> Callable[..., Any]:
    """A target invoking the runnable ``build(**kwargs)`` (see the module doc)."""
    _lc("runnables")  # the extra is checked when the target is made, not at the first call

    def call_sync(chain: Any, call: PythonCall) -> dict[str, Any]:
        value, collector, config = _invocation(call, input_key, id_key)
        return _result(chain.invoke(value, config=config), collector, id_key)

    async def call_async(chain: Any, call: PythonCall) -> dict[str, Any]:
        value, collector, config = _invocation(call, input_key, id_key)
        return _result(await chain.ainvoke(value, config=config), collector, id_key)

    return make_target(build, call_sync, call_async, asynchronous=asynchronous,
                       name="langchain")


__all__ = ["DocIdError", "format_documents", "langchain_target", "rag_chain", "seeded_llm"]
