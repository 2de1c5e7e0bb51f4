"""LlamaIndex agents (``FunctionAgent``, ``ReActAgent``, ``AgentWorkflow``) as targets.

:func:`snapaudit.adapters.llamaindex.llamaindex_target` runs a built agent workflow with
:func:`run_agent`: ``handler = agent.run(user_msg=question)``, the steps taken from the
workflow's own event stream (``handler.stream_events()``), the answer from its output.

* One step per ``ToolCallResult`` event: the tool's name, its arguments (``tool_kwargs``,
  :func:`snapaudit.tables.steps.step_input`), the documents it returned and its output
  text (``ToolOutput.content``). The documents are the tool's raw output when it is a list of
  nodes (``RetrieverTool``: ``NodeWithScore``), or the source nodes of a response it returned
  (``QueryEngineTool``); their ids as the pipeline adapter takes them (``node_id`` or
  ``metadata[id_key]``). Steps are in the order the model asked for them (the tool calls of
  the ``AgentOutput`` events; tools run in parallel finish in any order).
* The answer: ``AgentOutput.response.content`` of the workflow's result.

A sync target runs every agent call of the process on one event loop of its own (a daemon
thread): the async HTTP client an LLM makes on its first call is bound to that loop, and a
loop per call would leave it bound to a closed one.

:func:`seeded_function_llm` is the seed wrapper of a function-calling LLM (``OpenAILike``,
``OpenAI``, ...; what ``FunctionAgent`` needs): every chat and completion call gets
``seed=`` the call's seed, tools are prepared and read back by the wrapped LLM.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Sequence
from functools import cache
from typing import Any

from snapaudit.adapters.common import current_seed, require, seed_scope
from snapaudit.adapters.trajectory import agent_result, make_step, model_order

EXTRA = "llamaindex"


def is_agent(obj: Any) -> bool:
    """Whether ``obj`` is a LlamaIndex workflow (an agent), not a query engine."""
    return isinstance(obj, require("llama_index.core.workflow", EXTRA).Workflow)


@cache
def _seeded_class() -> type[Any]:
    base = require("llama_index.core.llms.function_calling", EXTRA).FunctionCallingLLM
    pydantic = require("pydantic", EXTRA)

    class SeededFunctionLLM(base):  # type: ignore[misc, valid-type]
        """A function-calling LLM whose calls carry the current call's seed."""

        _inner: Any = pydantic.PrivateAttr()
        _seed_kwarg: str = pydantic.PrivateAttr()

        @property
        def metadata(self) -> Any:
            return self._inner.metadata

        def _kw(self, kwargs: dict[str, Any]) -> dict[str, Any]:
            seed = current_seed()
            return kwargs if seed is None else {**kwargs, self._seed_kwarg: seed}

        def chat(self, messages: Sequence[Any], **kwargs: Any) -> Any:
            return self._inner.chat(messages, **self._kw(kwargs))

        async def achat(self, messages: Sequence[Any], **kwargs: Any) -> Any:
            return await self._inner.achat(messages, **self._kw(kwargs))

        def stream_chat(self, messages: Sequence[Any], **kwargs: Any) -> Any:
            return self._inner.stream_chat(messages, **self._kw(kwargs))

        async def astream_chat(self, messages: Sequence[Any], **kwargs: Any) -> Any:
            return await self._inner.astream_chat(messages, **self._kw(kwargs))

        def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            return self._inner.complete(prompt, formatted=formatted, **self._kw(kwargs))

        async def acomplete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            return await self._inner.acomplete(prompt, formatted=formatted,
                                               **self._kw(kwargs))

        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            return self._inner.stream_complete(prompt, formatted=formatted,
                                               **self._kw(kwargs))

        async def astream_complete(self, prompt: str, formatted: bool = False,
                                   **kwargs: Any) -> Any:
            return await self._inner.astream_complete(prompt, formatted=formatted,
                                                      **self._kw(kwargs))

        def _prepare_chat_with_tools(self, *args: Any, **kwargs: Any) -> Any:
            return self._inner._prepare_chat_with_tools(*args, **kwargs)

        def _validate_chat_with_tools_response(self, *args: Any, **kwargs: Any) -> Any:
            return self._inner._validate_chat_with_tools_response(*args, **kwargs)

        def get_tool_calls_from_response(self, *args: Any, **kwargs: Any) -> Any:
            return self._inner.get_tool_calls_from_response(*args, **kwargs)

        @classmethod
        def class_name(cls) -> str:
            return "snapaudit_seeded_function_llm"

    return SeededFunctionLLM


def is_function_calling(llm: Any) -> bool:
    """Whether ``llm`` is a LlamaIndex function-calling LLM."""
    base = require("llama_index.core.llms.function_calling", EXTRA).FunctionCallingLLM
    return isinstance(llm, base)


def seeded_function_llm(llm: Any, *, seed_kwarg: str = "seed") -> Any:
    """``llm`` (a ``FunctionCallingLLM``) called with ``seed_kwarg=`` the call's seed."""
    wrapper = _seeded_class()(callback_manager=llm.callback_manager)
    wrapper._inner, wrapper._seed_kwarg = llm, seed_kwarg
    return wrapper


def _documents(raw: Any) -> list[Any]:
    if isinstance(raw, list) and all(hasattr(n, "node_id") or hasattr(n, "node")
                                     for n in raw):
        return raw
    nodes = getattr(raw, "source_nodes", None)  # a query engine's Response
    return list(nodes) if isinstance(nodes, list) else []


async def run_agent(agent: Any, question: str, id_key: str | None,
                    outputs: bool) -> dict[str, Any]:
    """One run of ``agent`` on ``question``: the answer, the documents read, the steps."""
    events = require("llama_index.core.agent.workflow", EXTRA)
    handler = agent.run(user_msg=question)
    asked: list[str] = []
    results: list[Any] = []
    async for event in handler.stream_events():
        if isinstance(event, events.AgentOutput):
            asked.extend(c.tool_id for c in event.tool_calls or ())
        elif isinstance(event, events.ToolCallResult):
            results.append(event)
    output = await handler
    order = model_order([r.tool_id for r in results], asked)
    if order is not None:
        results = [results[i] for i in order]
    items = [_documents(r.tool_output.raw_output) for r in results]
    steps = [make_step(r.tool_name, r.tool_kwargs, docs,
                       str(r.tool_output.content) if outputs else None, id_key)
             for r, docs in zip(results, items, strict=True)]
    return agent_result(getattr(output, "response", output), steps, items)


_LOOPS: dict[int, asyncio.AbstractEventLoop] = {}
_LOOPS_GUARD = threading.Lock()


def _agents_loop() -> asyncio.AbstractEventLoop:
    """This process's one event loop for sync agent calls, run by a daemon thread."""
    with _LOOPS_GUARD:
        loop = _LOOPS.get(os.getpid())
        if loop is None:
            loop = _LOOPS[os.getpid()] = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="snapaudit-agents",
                             daemon=True).start()
        return loop


def run_agent_sync(agent: Any, question: str, seed: int, id_key: str | None,
                   outputs: bool) -> dict[str, Any]:
    """:func:`run_agent` from a sync target: on one event loop shared by every call of the
    process (an LLM's async client, made on the first call's loop, stays usable), under
    ``seed``."""
    async def seeded() -> dict[str, Any]:
        with seed_scope(seed):
            return await run_agent(agent, question, id_key, outputs)

    return asyncio.run_coroutine_threadsafe(seeded(), _agents_loop()).result()
