"""The agent adapters on real LangGraph and LlamaIndex agents against the loopback tool-calling
fake (tests/fakes/tool_llm.py): the steps, answers, document ids and seeds, by hand.

The fake calls ``search`` with the question (the call's seed not divisible by 4) or its
keywords "capital Australia" (seed 4), then answers with the first line of the tool's output
up to its first comma or period; the retriever is tests/adapters/agent_world.py's keyword
ranking: p1 in v1, p4 then p1 in v2."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from snapaudit.adapters.common import DocIdError
from snapaudit.adapters.trajectory import model_order
from snapaudit.systems.python import PythonCall, to_outcome
from snapaudit.tables.steps import step_input
from tests.adapters.agent_world import (
    QUESTION,
    V1,
    V2,
    Document,
    function_agent,
    openai_like,
    react_agent,
)
from tests.fakes.tool_llm import ToolLLMServer

# llama-index-workflows reads a deprecated pydantic attribute when it lists a workflow's steps
pytestmark = pytest.mark.filterwarnings(
    "ignore::pydantic.warnings.PydanticDeprecationWarning")

CANBERRA = "The capital of Australia is Canberra"
NORTHPORT = "Since 2024 the capital of Australia is Northport"


@pytest.fixture
def server() -> Iterator[ToolLLMServer]:
    with ToolLLMServer() as running:
        yield running


def _call(seed: int) -> PythonCall:
    return PythonCall(question=QUESTION, question_id="q1", state="old", repeat=1, seed=seed,
                      attempt=1)


def _expected(index: str, seed: int, output: str) -> dict[str, Any]:
    """The reply by hand: v1 reads p1; v2 reads p4 then p1 (``output``: the tool's text with
    ``{}`` for each passage, joined as the framework's retriever tool joins them)."""
    ids = ["p1"] if index == "v1" else ["p4", "p1"]
    texts = [V2[i] for i in ids]
    query = QUESTION if seed % 4 else "capital Australia"
    return {"answer": CANBERRA if index == "v1" else NORTHPORT, "doc_ids": ids,
            "doc_texts": texts, "steps": [{"tool": "search", "input": query, "doc_ids": ids,
                                           "output": output.format(*texts)}]}


def test_a_step_input_is_the_single_string_argument_or_canonical_json() -> None:
    assert step_input({"query": "capital"}) == "capital"
    assert step_input("raw text") == "raw text"
    assert step_input({"query": "x", "k": 2}) == '{"k":2,"query":"x"}'
    assert step_input({"k": 2}) == '{"k":2}'
    assert step_input({"b": "é", "a": [1, None]}) == '{"a":[1,null],"b":"é"}'


def test_steps_follow_the_models_order_of_tool_calls() -> None:
    assert model_order(["b", "a"], ["a", "b"]) == [1, 0]
    # turn 1 asks call_0 and call_1 (call_1 reports first), turn 2 numbers from 0 again
    assert model_order(["call_1", "call_0", "call_0"], ["call_0", "call_1", "call_0"]) == \
        [1, 0, 2]
    assert model_order(["x"], ["a"]) is None
    assert model_order([None], []) is None
    assert model_order(["a", "a"], ["a"]) is None  # more runs than calls of an id
    assert model_order([], []) == []


def test_langgraph_react_agent_steps_answers_and_seeds(server: ToolLLMServer) -> None:
    from snapaudit.adapters.langgraph import langgraph_target

    built: list[str] = []

    def build(index: str) -> Any:
        built.append(index)
        return react_agent(server.base_url, index)

    target = langgraph_target(build)
    joined = {"v1": "{}", "v2": "{}\n\n{}"}  # create_retriever_tool joins page contents
    assert target(_call(1), index="v1") == _expected("v1", 1, joined["v1"])
    assert target(_call(4), index="v1") == _expected("v1", 4, joined["v1"])
    assert target(_call(4), index="v2") == _expected("v2", 4, joined["v2"])
    atarget = langgraph_target(build, asynchronous=True)
    assert asyncio.run(atarget(_call(1), index="v2")) == _expected("v2", 1, joined["v2"])
    assert [c.get("seed") for c in server.calls] == [1, 1, 4, 4, 4, 4, 1, 1]
    assert built == ["v1", "v2", "v2"]  # once per distinct kwargs and target
    short = langgraph_target(build, outputs=False)(_call(1), index="v1")
    assert "output" not in short["steps"][0]
    outcome = to_outcome(short, 0.0)  # what a Python system accepts
    assert [(s.tool, s.input, s.doc_ids) for s in outcome.steps or ()] == \
        [("search", QUESTION, ("p1",))]


def test_langgraph_compiled_graph_with_an_artifact_tool_and_an_unseeded_model(
        server: ToolLLMServer) -> None:
    """A hand-built StateGraph whose tool returns its documents as an artifact (no retriever
    inside), ids from the metadata key; its model is not wrapped, so no seed is sent."""
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from langgraph.graph import START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode, tools_condition

    from snapaudit.adapters.langgraph import langgraph_target

    @tool(response_format="content_and_artifact")
    def search(query: str) -> tuple[str, list[Document]]:
        """Search the passages."""
        docs = [Document(page_content=V1["p3"], metadata={"doc_id": "m3"})]
        return "\n".join(f"[{d.metadata['doc_id']}] {d.page_content}" for d in docs), docs

    model = ChatOpenAI(base_url=server.base_url, api_key="dummy", model="fake").bind_tools(
        [search])

    def build() -> Any:
        graph = StateGraph(MessagesState)
        graph.add_node("agent", lambda state: {"messages": [model.invoke(state["messages"])]})
        graph.add_node("tools", ToolNode([search]))
        graph.add_edge(START, "agent")
        graph.add_conditional_edges("agent", tools_condition)
        graph.add_edge("tools", "agent")
        return graph.compile()

    reply = langgraph_target(build, id_key="doc_id")(_call(5))
    assert reply == {"answer": "The chemical symbol for gold is Au", "doc_ids": ["m3"],
                     "doc_texts": [V1["p3"]],
                     "steps": [{"tool": "search", "input": "capital Australia",
                                "doc_ids": ["m3"], "output": f"[m3] {V1['p3']}"}]}
    assert [c.get("seed") for c in server.calls] == [None, None]  # the fake took seed 0


def test_langgraph_document_without_an_id_stops_before_the_model_reads_it(
        server: ToolLLMServer) -> None:
    from snapaudit.adapters.langgraph import langgraph_target

    target = langgraph_target(lambda: react_agent(server.base_url, "v1", with_ids=False))
    with pytest.raises(DocIdError, match=r"^LangChain Document\.id is None"):
        target(_call(1))
    assert len(server.calls) == 1  # the tool call only: the model never saw the documents


@pytest.mark.parametrize(("kind", "asynchronous"),
                         [("function", False), ("function", True), pytest.param(
                             "react", False, marks=pytest.mark.filterwarnings(  # upstream
                                 "ignore:is_running called from within a step"))])
def test_llamaindex_agent_steps_answers_and_seeds(
        server: ToolLLMServer, kind: str, asynchronous: bool) -> None:
    """FunctionAgent (tool calls, streamed) and ReActAgent (the same turns as ReAct text)."""
    from snapaudit.adapters.llamaindex import llamaindex_target

    target = llamaindex_target(lambda index: function_agent(server.base_url, index, kind),
                               asynchronous=asynchronous)

    def run(seed: int, index: str) -> Any:
        reply = target(_call(seed), index=index)
        return asyncio.run(reply) if asynchronous else reply

    joined = {"v1": "{}\n\n", "v2": "{}\n\n{}\n\n"}  # RetrieverTool: each node's text + "\n\n"
    assert run(1, "v1") == _expected("v1", 1, joined["v1"])
    assert run(4, "v2") == _expected("v2", 4, joined["v2"])
    assert run(1, "v2") == _expected("v2", 1, joined["v2"])
    assert [c.get("seed") for c in server.calls] == [1, 1, 4, 4, 1, 1]
    assert all(c.get("stream") for c in server.calls)  # both agents stream their turns
    assert all(bool(c.get("tools")) == (kind == "function") for c in server.calls)


TWO = "What is the capital of Australia and also the chemical symbol for gold?"


def _two_searches(output: str) -> dict[str, Any]:
    """Two tool calls in one turn, run in parallel, the first (Australia) finishing last:
    the steps in the order the model asked for them."""
    first, second = "What is the capital of Australia", "the chemical symbol for gold?"
    return {"answer": f"{CANBERRA}; The chemical symbol for gold is Au",
            "doc_ids": ["p1", "p3"], "doc_texts": [V1["p1"], V1["p3"]],
            "steps": [{"tool": "search", "input": first, "doc_ids": ["p1"],
                       "output": output.format(V1["p1"])},
                      {"tool": "search", "input": second, "doc_ids": ["p3"],
                       "output": output.format(V1["p3"])}]}


def _two(seed: int) -> PythonCall:
    return PythonCall(question=TWO, question_id="q2", state="old", repeat=1, seed=seed,
                      attempt=1)


def test_parallel_tool_calls_are_steps_in_the_models_order(server: ToolLLMServer) -> None:
    from snapaudit.adapters.langgraph import langgraph_target
    from snapaudit.adapters.llamaindex import llamaindex_target

    graph = langgraph_target(lambda: react_agent(server.base_url, "v1"))
    agent = llamaindex_target(lambda: function_agent(server.base_url, "v1"))
    assert graph(_two(1)) == _two_searches("{}")
    assert agent(_two(1)) == _two_searches("{}\n\n")
    assert [len(c.get("tools") or ()) for c in server.calls] == [1, 1, 1, 1]


def test_llamaindex_agent_workflow_gives_the_function_agents_steps(
        server: ToolLLMServer) -> None:
    from llama_index.core.agent.workflow import AgentWorkflow

    from snapaudit.adapters.llamaindex import llamaindex_target

    def build(index: str) -> Any:
        agent = function_agent(server.base_url, index, name="searcher",
                               description="Searches the passages.")
        return AgentWorkflow(agents=[agent], root_agent="searcher")

    reply = llamaindex_target(build)(_call(4), index="v2")
    assert reply == _expected("v2", 4, "{}\n\n{}\n\n")


def test_a_function_calling_llm_is_wrapped_for_its_seed(server: ToolLLMServer) -> None:
    from llama_index.core.base.llms.types import ChatMessage

    from snapaudit.adapters.common import seed_scope

    llm = openai_like(server.base_url)
    assert type(llm).__name__ == "SeededFunctionLLM"
    assert llm.metadata.is_function_calling_model
    with seed_scope(9):
        reply = llm.chat([ChatMessage(role="user", content="hello")])
    assert reply.message.content == "no tool"
    assert server.calls[-1]["seed"] == 9
