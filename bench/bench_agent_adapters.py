"""What the agent adapters cost per call (issue 39 item 4), against the loopback tool-calling
fake (tests/fakes/tool_llm.py: two chat completions per call, a ``search`` tool call then
the answer), measured in one run:

* ``openai SDK by hand``: the same two requests and the same search, written directly with
  the ``openai`` client (the baseline: what any agent must spend on HTTP);
* each framework's agent invoked directly (``graph.invoke``; ``agent.run`` awaited), then
  through its snapaudit target (``langgraph_target``; ``llamaindex_target``, sync and async):
  the target's cost over the direct call is what capturing the steps and the seed adds.

Printed: the mean wall time per call of each and its ratio to the baseline. Usage::

    python bench/bench_agent_adapters.py             # 100 calls each
    python bench/bench_agent_adapters.py --calls 30
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.adapters.agent_world import (
    V1,
    function_agent,
    ranked,
    react_agent,
)
from tests.fakes.tool_llm import ToolLLMServer

from snapaudit.adapters.langgraph import langgraph_target
from snapaudit.adapters.llamaindex import llamaindex_target
from snapaudit.systems.python import PythonCall

QUESTION = "What is the chemical symbol for gold?"  # the retriever answers it at once


def per_call(fn: Callable[[int], Any], calls: int) -> float:
    """Mean seconds per call of ``fn(seed)`` over ``calls`` seeds (after two warm-up calls)."""
    fn(1)
    fn(2)
    start = time.perf_counter()
    for seed in range(calls):
        fn(seed * 4 + 1)
    return (time.perf_counter() - start) / calls


def by_hand(base_url: str) -> Callable[[int], Any]:
    """The two requests of the agent written with the openai client."""
    from openai import OpenAI

    client = OpenAI(base_url=base_url, api_key="dummy", max_retries=0)
    tools = [{"type": "function", "function": {
        "name": "search", "description": "Search the passages.",
        "parameters": {"type": "object", "properties": {"query": {"type": "string"}}}}}]

    def run(seed: int) -> str:
        messages: list[Any] = [{"role": "user", "content": QUESTION}]
        first = client.chat.completions.create(model="fake", messages=messages, tools=tools,
                                               seed=seed).choices[0].message
        call = (first.tool_calls or [])[0]
        query = json.loads(call.function.arguments)["query"]
        found = "\n\n".join(V1[i] for i in ranked(V1, query))
        messages += [first.model_dump(exclude_none=True),
                     {"role": "tool", "tool_call_id": call.id, "content": found}]
        return str(client.chat.completions.create(model="fake", messages=messages,
                                                  seed=seed).choices[0].message.content)

    return run


def _call(seed: int) -> PythonCall:
    return PythonCall(question=QUESTION, question_id="q1", state="old", repeat=1, seed=seed,
                      attempt=1)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=100)
    calls = parser.parse_args().calls
    warnings.simplefilter("ignore")  # the frameworks' own deprecation notices
    with ToolLLMServer() as server:
        url = server.base_url
        graph, agent = react_agent(url, "v1"), function_agent(url, "v1")
        lg_target = langgraph_target(lambda: graph)
        li_target = llamaindex_target(lambda: agent)
        li_async = llamaindex_target(lambda: agent, asynchronous=True)
        loop = asyncio.new_event_loop()
        rows = [
            ("openai SDK by hand", by_hand(url)),
            ("LangGraph graph.invoke", lambda s: graph.invoke(
                {"messages": [{"role": "user", "content": QUESTION}]})),
            ("LangGraph langgraph_target", lambda s: lg_target(_call(s))),
            ("LlamaIndex agent.run", lambda s: loop.run_until_complete(
                _run(agent))),
            ("LlamaIndex target (sync)", lambda s: li_target(_call(s))),
            ("LlamaIndex target (async)", lambda s: loop.run_until_complete(
                li_async(_call(s)))),
        ]
        times = [(name, per_call(fn, calls)) for name, fn in rows]
        loop.close()
    base = times[0][1]
    print(f"{calls} calls each, two chat completions per call on the loopback fake")
    for name, seconds in times:
        print(f"{name:28s} {seconds * 1000:7.1f} ms/call  (x{seconds / base:5.2f})")


async def _run(agent: Any) -> Any:
    return await agent.run(user_msg=QUESTION)


if __name__ == "__main__":
    main()
