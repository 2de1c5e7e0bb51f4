"""A LangGraph ReAct agent audited by snapaudit: ``create_react_agent`` with one retriever tool.

``answer`` is the target the protocol names (``target = "agent:answer"``); the state's
``kwargs`` pick the index the agent's ``search`` tool reads: ``index = "v1"`` searches
``passages_v1.jsonl``, ``"v2"`` ``passages_v2.jsonl`` (v1 plus two passages with newer
facts). The model is any OpenAI-compatible chat endpoint with tool calls, named by the
environment: ``AGENT_BASE_URL`` (default ``http://127.0.0.1:8000/v1``, llama-cpp-python's
server), ``AGENT_MODEL`` (default ``local``), ``AGENT_API_KEY`` (default ``none``). One model
client serves both states. Documents carry their passage id (``Document(id=...)``).
"""

from __future__ import annotations

import json
import os
import warnings
from functools import cache
from pathlib import Path
from typing import Any

from langchain_core.documents import Document
from langchain_core.tools import create_retriever_tool
from langchain_openai import ChatOpenAI

from snapaudit.adapters.langgraph import langgraph_target, seeded_chat_model

with warnings.catch_warnings():  # deprecation notices of the two packages themselves
    warnings.simplefilter("ignore", DeprecationWarning)
    from langchain_community.retrievers import BM25Retriever
    from langgraph.prebuilt import create_react_agent

HERE = Path(__file__).resolve().parent
PROMPT = ("Answer the question with a name or a short phrase. Search the passages first; "
          "answer from what the search returned.")


@cache
def model() -> Any:
    """The one chat model of both states, called with each call's seed."""
    return seeded_chat_model(ChatOpenAI(
        base_url=os.environ.get("AGENT_BASE_URL", "http://127.0.0.1:8000/v1"),
        api_key=os.environ.get("AGENT_API_KEY", "none"),
        model=os.environ.get("AGENT_MODEL", "local"), temperature=0.7, max_tokens=64,
        timeout=60, max_retries=0))


def documents(index: str) -> list[Document]:
    with open(HERE / f"passages_{index}.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [Document(page_content=r["text"], id=r["id"]) for r in rows]


def build(index: str = "v1", k: int = 2) -> Any:
    """The agent of one state: the model and a ``search`` tool over ``index``."""
    retriever = BM25Retriever.from_documents(documents(index), k=k)
    search = create_retriever_tool(retriever, "search", "Search the passages.")
    with warnings.catch_warnings():  # create_react_agent is deprecated in langgraph 1.x
        warnings.simplefilter("ignore", DeprecationWarning)
        return create_react_agent(model(), [search], prompt=PROMPT)


answer = langgraph_target(build)
aanswer = langgraph_target(build, asynchronous=True)
