"""A LlamaIndex pipeline as a Python-system target (extra ``snapaudit[llamaindex]``).

``llamaindex_target(build)`` is the target a protocol names: ``build(**kwargs)`` (the
state's ``kwargs``) returns a query engine, built once per distinct kwargs; each call runs
``engine.query(question)`` (``aquery`` with ``asynchronous=True``) and returns
``{"answer": Response.response, "doc_ids": [n.node.node_id for n in Response.source_nodes]}``
(or each node's ``metadata[id_key]``). Node ids are random UUIDs per build unless the nodes
were given ids (``TextNode(id_=...)``, ``Document(doc_id=...)``): a rebuilt index then shares
no id with the old one; the run warns (``random_doc_ids``) when ids look like UUIDs.

An agent (``FunctionAgent``, ``ReActAgent``, ``AgentWorkflow``: a workflow) built by
``build`` is run instead, its steps taken from its event stream
(:mod:`snapaudit.adapters.llamaindex_agent`).

Query engines pass no per-call LLM kwargs, so the seed reaches the LLM through
:func:`seeded_llm`, an LLM wrapper reading the call's seed
(:func:`snapaudit.adapters.common.current_seed`); :func:`query_engine` builds a
``RetrieverQueryEngine`` over a retriever and the seeded LLM. A llama.cpp model (the
``LlamaCPP`` LLM of ``llama-index-llms-llama-cpp`` or a bare ``llama_cpp.Llama``) is called
with ``seed=`` under its one lock, its prompt cache reset before each call, so the same prompt
and seed give the same answer; ``acomplete`` runs it in a worker thread (LlamaIndex's default
``acomplete`` would block the event loop). Another LLM gets ``complete(..., seed=seed)``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from functools import cache
from typing import Any

from snapaudit.adapters.common import (
    DocIdError,
    current_seed,
    is_llama,
    make_target,
    model_lock,
    require,
    reset_llama,
    result,
)
from snapaudit.adapters.llamaindex_agent import (
    is_agent,
    is_function_calling,
    run_agent,
    run_agent_sync,
    seeded_function_llm,
)
from snapaudit.systems.python import PythonCall

EXTRA = "llamaindex"


def _li(module: str) -> Any:
    return require(f"llama_index.core.{module}", EXTRA)


@cache
def _seeded_class() -> type[Any]:
    custom = _li("llms.custom")
    types = _li("base.llms.types")
    pydantic = require("pydantic", EXTRA)

    class SeededLLM(custom.CustomLLM):  # type: ignore[misc, name-defined]
        """An LLM answering with the current call's seed (see the module doc)."""

        _inner: Any = pydantic.PrivateAttr()
        _model: Any = pydantic.PrivateAttr()
        _generate_kwargs: dict[str, Any] = pydantic.PrivateAttr()
        _metadata: Any = pydantic.PrivateAttr()
        _seed_kwarg: str = pydantic.PrivateAttr()

        @property
        def metadata(self) -> Any:
            return self._metadata

        def _native(self, prompt: str, formatted: bool) -> Any:
            if not formatted:
                prompt = self.completion_to_prompt(prompt)
            params = {**self._generate_kwargs, "stream": False}
            seed = current_seed()
            if seed is not None:
                params["seed"] = seed
            with model_lock(self._model):
                reset_llama(self._model)
                response = self._model(prompt=prompt, **params)
            return types.CompletionResponse(text=response["choices"][0]["text"],
                                            raw=response)

        def _kwargs(self, kwargs: dict[str, Any]) -> dict[str, Any]:
            seed = current_seed()
            return kwargs if seed is None else {**kwargs, self._seed_kwarg: seed}

        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            if self._model is not None:
                return self._native(prompt, formatted)
            return self._inner.complete(prompt, formatted=formatted, **self._kwargs(kwargs))

        async def acomplete(self, prompt: str, formatted: bool = False,
                            **kwargs: Any) -> Any:
            if self._model is not None:  # blocking: a worker thread, never the event loop
                return await asyncio.to_thread(self._native, prompt, formatted)
            return await self._inner.acomplete(prompt, formatted=formatted,
                                               **self._kwargs(kwargs))

        def stream_complete(self, prompt: str, formatted: bool = False,
                            **kwargs: Any) -> Iterator[Any]:
            response = self.complete(prompt, formatted=formatted, **kwargs)
            yield types.CompletionResponse(text=response.text, delta=response.text,
                                           raw=response.raw)

        @classmethod
        def class_name(cls) -> str:
            return "snapaudit_seeded_llm"

    return SeededLLM


def seeded_llm(llm: Any, *, seed_kwarg: str = "seed",
               generate_kwargs: dict[str, Any] | None = None, max_tokens: int = 256) -> Any:
    """``llm`` (a LlamaIndex LLM or a ``llama_cpp.Llama``) answering with the call's seed: a
    function-calling LLM (what an agent needs) through
    :func:`~snapaudit.adapters.llamaindex_agent.seeded_function_llm`. ``generate_kwargs`` and
    ``max_tokens`` apply to a bare ``llama_cpp.Llama`` only."""
    cls = _seeded_class()
    types = _li("base.llms.types")
    model = getattr(llm, "_model", None)
    if is_function_calling(llm) and not is_llama(model):
        return seeded_function_llm(llm, seed_kwarg=seed_kwarg)
    if is_llama(llm):
        kwargs = {"max_tokens": max_tokens, **(generate_kwargs or {})}
        metadata = types.LLMMetadata(context_window=llm.n_ctx(), num_output=max_tokens,
                                     model_name=str(getattr(llm, "model_path", "llama_cpp")))
        wrapper = cls()
        wrapper._inner, wrapper._model, wrapper._generate_kwargs = llm, llm, kwargs
    else:
        if not hasattr(llm, "complete") or not hasattr(llm, "metadata"):
            raise TypeError(f"seeded_llm needs a LlamaIndex LLM or a llama_cpp.Llama, got "
                            f"{type(llm).__name__}")
        wrapper = cls(completion_to_prompt=llm.completion_to_prompt,
                      messages_to_prompt=llm.messages_to_prompt)
        wrapper._inner, wrapper._model = llm, model if is_llama(model) else None
        wrapper._generate_kwargs = dict(getattr(llm, "generate_kwargs", {}) or {})
        metadata = llm.metadata
    wrapper._metadata, wrapper._seed_kwarg = metadata, seed_kwarg
    return wrapper


def query_engine(retriever: Any, llm: Any, **kwargs: Any) -> Any:
    """``RetrieverQueryEngine.from_args(retriever, llm=seeded_llm(llm), **kwargs)``."""
    engines = _li("query_engine")
    return engines.RetrieverQueryEngine.from_args(retriever, llm=seeded_llm(llm), **kwargs)


def _result(response: Any, id_key: str | None) -> dict[str, Any]:
    return result(response, getattr(response, "source_nodes", None), id_key)


def llamaindex_target(build: Callable[..., Any], *, id_key: str | None = None,
                      outputs: bool = True, asynchronous: bool = False) -> Callable[..., Any]:
    """A target querying the engine ``build(**kwargs)``, or running the agent it built (see
    the module doc); ``outputs=False`` keeps no tool outputs in an agent's steps."""
    _li("schema")  # the extra is checked when the target is made, not at the first call

    def call_sync(engine: Any, call: PythonCall) -> dict[str, Any]:
        if is_agent(engine):  # a workflow runs on an event loop: the process's agents loop
            return run_agent_sync(engine, call.question, call.seed, id_key, outputs)
        return _result(engine.query(call.question), id_key)

    async def call_async(engine: Any, call: PythonCall) -> dict[str, Any]:
        if is_agent(engine):
            return await run_agent(engine, call.question, id_key, outputs)
        return _result(await engine.aquery(call.question), id_key)

    return make_target(build, call_sync, call_async, asynchronous=asynchronous,
                       name="llamaindex")


__all__ = ["DocIdError", "llamaindex_target", "query_engine", "seeded_llm"]
