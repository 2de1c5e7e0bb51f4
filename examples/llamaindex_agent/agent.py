"""A LlamaIndex agent audited by snapaudit: a ``FunctionAgent`` with one retriever tool.

``answer`` (and ``aanswer``, the same agent awaited) is the target the protocol names; the
state's ``kwargs`` pick the index its ``search`` tool (a ``RetrieverTool`` over BM25) reads:
``index = "v1"`` searches ``passages_v1.jsonl``, ``"v2"`` ``passages_v2.jsonl`` (v1 plus two
passages with newer facts). The model is any OpenAI-compatible chat endpoint with tool calls
(``OpenAILike``), named by the environment: ``AGENT_BASE_URL`` (default
``http://127.0.0.1:8000/v1``, llama-cpp-python's server), ``AGENT_MODEL`` (default
``local``), ``AGENT_API_KEY`` (default ``none``). One model client serves both states. Nodes
carry their passage id (``TextNode(id_=...)``).
"""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.schema import TextNode
from llama_index.core.tools import RetrieverTool
from llama_index.llms.openai_like import OpenAILike
from llama_index.retrievers.bm25 import BM25Retriever

from snapaudit.adapters.llamaindex import llamaindex_target, seeded_llm

HERE = Path(__file__).resolve().parent
PROMPT = ("Answer the question with a name or a short phrase. Search the passages first; "
          "answer from what the search returned.")


@cache
def llm() -> Any:
    """The one LLM of both states, called with each call's seed."""
    return seeded_llm(OpenAILike(
        api_base=os.environ.get("AGENT_BASE_URL", "http://127.0.0.1:8000/v1"),
        api_key=os.environ.get("AGENT_API_KEY", "none"),
        model=os.environ.get("AGENT_MODEL", "local"), temperature=0.7, max_tokens=64,
        timeout=60, max_retries=0, is_chat_model=True, is_function_calling_model=True,
        context_window=4096))


def nodes(index: str) -> list[TextNode]:
    with open(HERE / f"passages_{index}.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [TextNode(text=r["text"], id_=r["id"]) for r in rows]


def build(index: str = "v1", k: int = 2) -> Any:
    """The agent of one state: the LLM and a ``search`` tool over ``index``."""
    retriever = BM25Retriever.from_defaults(nodes=nodes(index), similarity_top_k=k)
    search = RetrieverTool.from_defaults(retriever, name="search",
                                         description="Search the passages.")
    return FunctionAgent(tools=[search], llm=llm(), system_prompt=PROMPT)


answer = llamaindex_target(build)
aanswer = llamaindex_target(build, asynchronous=True)
