"""A small world for the agent adapter tests: passages, a keyword retriever for each framework
(real ``BaseRetriever`` subclasses whose ranking is easy to compute by hand) and the model
clients of both frameworks pointed at the loopback tool-calling fake.

The retriever scores a passage by how many of the query's words longer than three letters it
contains (lower case, punctuation removed), drops passages scoring 0, and ranks ties by the
later id first (a newer passage first). So "What is the capital of Australia?" (words what,
capital, australia) finds p1 in v1 and p4, p1 in v2, as does "capital Australia".

A query naming Australia takes :data:`SLOW_S` longer than the others: of two tool calls run in
parallel, one asking about Australia finishes last.
"""

from __future__ import annotations

import asyncio
import re
import time
import warnings
from typing import Any

from tests.adapters.frameworks import require_agent_frameworks

require_agent_frameworks()
from langchain_core.callbacks import CallbackManagerForRetrieverRun  # noqa: E402
from langchain_core.documents import Document  # noqa: E402
from langchain_core.retrievers import BaseRetriever  # noqa: E402
from langchain_core.tools import create_retriever_tool  # noqa: E402
from langchain_openai import ChatOpenAI  # noqa: E402
from llama_index.core.agent.workflow import FunctionAgent, ReActAgent  # noqa: E402
from llama_index.core.retrievers import BaseRetriever as LiRetriever  # noqa: E402
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode  # noqa: E402
from llama_index.core.tools import RetrieverTool  # noqa: E402
from llama_index.llms.openai_like import OpenAILike  # noqa: E402

from snapaudit.adapters.langgraph import seeded_chat_model  # noqa: E402
from snapaudit.adapters.llamaindex import seeded_llm  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    from langgraph.prebuilt import create_react_agent

V1 = {"p1": "The capital of Australia is Canberra, chosen in 1908.",
      "p2": "Mount Everest is the highest mountain above sea level.",
      "p3": "The chemical symbol for gold is Au."}
V2 = {**V1, "p4": "Since 2024 the capital of Australia is Northport."}
INDEXES = {"v1": V1, "v2": V2}
QUESTION = "What is the capital of Australia?"
SLOW_S = 0.3


def _delay(query: str) -> float:
    return SLOW_S if "australia" in query.lower() else 0.0


def ranked(passages: dict[str, str], query: str, k: int = 2) -> list[str]:
    """The ids the keyword retriever returns for ``query`` (see the module doc)."""
    words = {w for w in re.findall(r"[a-z0-9]+", query.lower()) if len(w) > 3}
    scores = {i: len(words & set(re.findall(r"[a-z0-9]+", t.lower())))
              for i, t in passages.items()}
    hits = sorted((i for i, s in scores.items() if s), key=lambda i: (-scores[i], -int(i[1:])))
    return hits[:k]


class KeywordRetriever(BaseRetriever):
    """LangChain: the keyword retriever over ``passages``."""

    passages: dict[str, str]
    with_ids: bool = True

    def _get_relevant_documents(self, query: str, *,
                                run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        time.sleep(_delay(query))
        return [Document(page_content=self.passages[i], id=i if self.with_ids else None)
                for i in ranked(self.passages, query)]


class LiKeywordRetriever(LiRetriever):
    """LlamaIndex: the keyword retriever over ``passages``."""

    def __init__(self, passages: dict[str, str]) -> None:
        super().__init__()
        self.passages = passages

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        return [NodeWithScore(node=TextNode(text=self.passages[i], id_=i), score=1.0)
                for i in ranked(self.passages, query_bundle.query_str)]

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        await asyncio.sleep(_delay(query_bundle.query_str))
        return self._retrieve(query_bundle)


def react_agent(base_url: str, index: str, with_ids: bool = True) -> Any:
    """LangGraph's prebuilt ReAct agent with a ``search`` retriever tool over ``index``."""
    retriever = KeywordRetriever(passages=INDEXES[index], with_ids=with_ids)
    search = create_retriever_tool(retriever, "search", "Search the passages.")
    model = seeded_chat_model(ChatOpenAI(base_url=base_url, api_key="dummy", model="fake",
                                         max_retries=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return create_react_agent(model, [search])


def openai_like(base_url: str) -> Any:
    """LlamaIndex's OpenAILike on the fake, seeded."""
    return seeded_llm(OpenAILike(api_base=base_url, api_key="dummy", model="fake",
                                 is_chat_model=True, is_function_calling_model=True,
                                 max_retries=0))


def function_agent(base_url: str, index: str, kind: str = "function", **kwargs: Any) -> Any:
    """LlamaIndex's FunctionAgent (``kind = "react"``: ReActAgent) with a ``search``
    RetrieverTool over ``index``."""
    search = RetrieverTool.from_defaults(LiKeywordRetriever(INDEXES[index]), name="search",
                                         description="Search the passages.")
    agent = ReActAgent if kind == "react" else FunctionAgent
    return agent(tools=[search], llm=openai_like(base_url), **kwargs)
