"""A LangGraph agent as a Python-system target (extra ``snapaudit[langgraph]``).

``langgraph_target(build)`` is the target a protocol names: ``build(**kwargs)`` (the state's
``kwargs``) returns a compiled graph (``StateGraph(...).compile()``, or the prebuilt
``create_react_agent(model, tools)``), built once per distinct kwargs. Each call runs
``graph.invoke({"messages": [{"role": "user", "content": question}]})`` (``ainvoke`` with
``asynchronous=True``) and returns ``{"answer", "doc_ids", "steps"}``:

* the steps, from LangChain's own callbacks (a handler on the call's config): one per tool
  run (``on_tool_start`` / ``on_tool_end``): the tool's name, its arguments
  (:func:`snapaudit.tables.steps.step_input`), the documents it returned and its
  output text. The documents are those of the retrievers that ran inside the tool
  (``on_retriever_end`` under the tool's run: ``create_retriever_tool``, or a ``@tool`` that
  calls ``retriever.invoke``), else the tool's artifact when it is a list of documents
  (``response_format="content_and_artifact"``); their ids as the pipeline adapters take them
  (``Document.id`` or ``metadata[id_key]``; a missing id stops the call at once). Steps are in
  the order the model asked for them (the tool calls of its messages; tools run in parallel
  finish in any order), else in the order they started;
* the answer: the content of the last message of the graph's output, else the output itself
  (a mapping with ``"answer"``).

The seed: a graph passes no per-call seed to its model, so the model is wrapped:
:func:`seeded_chat_model` (a chat model calling the wrapped one with ``seed=`` the call's
seed, its tools bound through the wrapped model's ``bind_tools``), given to
``create_react_agent`` or called in a node in place of the model. A llama.cpp chat model
(``ChatLlamaCpp``) is called under its model lock with its prompt cache reset.
"""

from __future__ import annotations

import threading
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
)
from snapaudit.adapters.langchain import config_seed
from snapaudit.adapters.trajectory import agent_result, make_step, model_order
from snapaudit.systems.python import PythonCall

EXTRA = "langgraph"


def _lc(module: str) -> Any:
    return require(f"langchain_core.{module}", EXTRA)


@cache
def _seeded_class() -> type[Any]:
    base = _lc("language_models").BaseChatModel
    config = _lc("runnables.config")

    class SeededChatModel(base):  # type: ignore[misc, valid-type]
        """A chat model calling ``inner`` with the current call's seed (see the module doc)."""

        inner: Any
        seed_kwarg: str = "seed"

        @property
        def _llm_type(self) -> str:
            return "snapaudit_seeded_chat_model"

        def _seeded(self, kwargs: dict[str, Any]) -> dict[str, Any]:
            seed = config_seed(config.ensure_config())
            seed = current_seed() if seed is None else seed
            return kwargs if seed is None else {**kwargs, self.seed_kwarg: seed}

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                      **kwargs: Any) -> Any:
            client = getattr(self.inner, "client", None)
            args = (messages, stop, run_manager)
            if not is_llama(client):
                return self.inner._generate(*args, **self._seeded(kwargs))
            with model_lock(client):
                reset_llama(client)
                return self.inner._generate(*args, **self._seeded(kwargs))

        async def _agenerate(self, messages: Any, stop: Any = None, run_manager: Any = None,
                             **kwargs: Any) -> Any:
            if is_llama(getattr(self.inner, "client", None)):  # blocking: a worker thread
                return await super()._agenerate(messages, stop, run_manager, **kwargs)
            return await self.inner._agenerate(messages, stop, run_manager,
                                               **self._seeded(kwargs))

        def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
            bound = self.inner.bind_tools(tools, **kwargs)
            return self.bind(**getattr(bound, "kwargs", {}))

    return SeededChatModel


def seeded_chat_model(model: Any, *, seed_kwarg: str = "seed") -> Any:
    """``model`` (a LangChain chat model) called with ``seed_kwarg=`` the call's seed."""
    if not hasattr(model, "_generate") or not hasattr(model, "bind_tools"):
        raise TypeError(f"seeded_chat_model needs a LangChain chat model, got "
                        f"{type(model).__name__}")
    return _seeded_class()(inner=model, seed_kwarg=seed_kwarg)


class _Run:
    """One tool run of a call: its name, arguments, documents and output."""

    def __init__(self, order: int, tool: str, args: Any, call_id: str | None) -> None:
        self.order, self.tool, self.args, self.call_id = order, tool, args, call_id
        self.documents: list[Any] = []
        self.retrieved = False
        self.output: Any = None


@cache
def _collector_class() -> type[Any]:
    base = _lc("callbacks").BaseCallbackHandler

    class StepCollector(base):  # type: ignore[misc, valid-type]
        """The tool runs of one call and the documents their retrievers returned."""

        run_inline = True
        raise_error = True

        def __init__(self, id_key: str | None) -> None:
            super().__init__()
            self.id_key = id_key
            self.runs: dict[Any, _Run] = {}
            self.parents: dict[Any, Any] = {}
            self.lock = threading.Lock()

        def _parent(self, run_id: Any, parent_run_id: Any) -> None:
            with self.lock:
                self.parents[run_id] = parent_run_id

        def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: Any,
                           parent_run_id: Any = None, **kwargs: Any) -> None:
            self._parent(run_id, parent_run_id)

        def on_retriever_start(self, serialized: Any, query: str, *, run_id: Any,
                               parent_run_id: Any = None, **kwargs: Any) -> None:
            self._parent(run_id, parent_run_id)

        def on_tool_start(self, serialized: Any, input_str: str, *, run_id: Any,
                          parent_run_id: Any = None, inputs: Any = None,
                          tool_call_id: str | None = None, **kwargs: Any) -> None:
            name = kwargs.get("name") or (serialized or {}).get("name") or "tool"
            args = input_str if inputs is None else inputs
            with self.lock:
                self.parents[run_id] = parent_run_id
                self.runs[run_id] = _Run(len(self.runs), str(name), args, tool_call_id)

        def on_tool_end(self, output: Any, *, run_id: Any, **kwargs: Any) -> None:
            with self.lock:
                if run_id in self.runs:
                    self.runs[run_id].output = output

        def on_retriever_end(self, documents: Sequence[Any], *, run_id: Any,
                             **kwargs: Any) -> None:
            doc_ids(documents, self.id_key)  # DocIdError now, before the model reads them
            with self.lock:
                tool = self._tool_of(run_id)
                if tool is not None:
                    tool.retrieved = True
                    tool.documents.extend(documents)

        def _tool_of(self, run_id: Any) -> _Run | None:
            seen = set()
            while run_id is not None and run_id not in seen:
                if run_id in self.runs:
                    return self.runs[run_id]
                seen.add(run_id)
                run_id = self.parents.get(run_id)
            return None

    return StepCollector


def _text(output: Any) -> str | None:
    """A tool's output as text (None for a tool that failed before its end)."""
    if output is None:
        return None
    content = getattr(output, "content", output)
    if isinstance(content, list):
        return "".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content
                       if isinstance(b, str | dict))
    return content if isinstance(content, str) else str(content)


def _documents(run: _Run) -> list[Any]:
    if run.retrieved:
        return run.documents
    artifact = getattr(run.output, "artifact", None)
    if isinstance(artifact, list) and all(hasattr(d, "page_content") for d in artifact):
        return artifact
    return []


def _ordered(runs: Sequence[_Run], messages: Sequence[Any]) -> list[_Run]:
    """The runs in the order of the model's tool calls when every run has one there, else
    in the order they started."""
    started = sorted(runs, key=lambda r: r.order)
    asked = [str(c.get("id")) for m in messages for c in getattr(m, "tool_calls", None) or ()]
    order = model_order([r.call_id for r in started], asked)
    return started if order is None else [started[i] for i in order]


def _result(output: Any, collector: Any, outputs: bool) -> dict[str, Any]:
    messages = output.get("messages") if isinstance(output, dict) else None
    messages = messages if isinstance(messages, list) else []
    answer = messages[-1] if messages else output
    runs = _ordered(list(collector.runs.values()), messages)
    items = [_documents(r) for r in runs]
    steps = [make_step(r.tool, r.args, docs, _text(r.output) if outputs else None,
                       collector.id_key) for r, docs in zip(runs, items, strict=True)]
    return agent_result(answer, steps, items)


def _invocation(call: PythonCall, id_key: str | None,
                recursion_limit: int) -> tuple[Any, Any, dict[str, Any]]:
    collector = _collector_class()(id_key)
    config = {"callbacks": [collector], "recursion_limit": recursion_limit,
              "configurable": {"snapaudit_seed": call.seed,
                               "thread_id": f"{call.question_id}|{call.state}|{call.repeat}"},
              "run_name": f"snapaudit {call.question_id}",
              "metadata": {"snapaudit_question_id": call.question_id,
                           "snapaudit_state": call.state, "snapaudit_repeat": call.repeat}}
    value = {"messages": [{"role": "user", "content": call.question}]}
    return value, collector, config


def langgraph_target(build: Callable[..., Any], *, id_key: str | None = None,
                     outputs: bool = True, recursion_limit: int = 25,
                     asynchronous: bool = False) -> Callable[..., Any]:
    """A target running the compiled graph ``build(**kwargs)`` (see the module doc);
    ``outputs=False`` keeps no tool outputs in the steps."""
    require("langgraph.graph", EXTRA)  # the extra is checked when the target is made

    def call_sync(graph: Any, call: PythonCall) -> dict[str, Any]:
        value, collector, config = _invocation(call, id_key, recursion_limit)
        return _result(graph.invoke(value, config=config), collector, outputs)

    async def call_async(graph: Any, call: PythonCall) -> dict[str, Any]:
        value, collector, config = _invocation(call, id_key, recursion_limit)
        return _result(await graph.ainvoke(value, config=config), collector, outputs)

    return make_target(build, call_sync, call_async, asynchronous=asynchronous,
                       name="langgraph")


__all__ = ["DocIdError", "langgraph_target", "seeded_chat_model"]
