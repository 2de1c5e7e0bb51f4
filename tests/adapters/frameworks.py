"""The optional frameworks for the adapter tests: imported here, or the test module skips."""

from __future__ import annotations

import warnings

import pytest


def require_frameworks() -> None:
    """Skip the calling test module when a framework is not installed."""
    pytest.importorskip("langchain_core", reason="langchain-core not installed "
                        "(pip install -e '.[langchain]')")
    pytest.importorskip("langchain_community", reason="langchain-community not installed "
                        "(pip install -e '.[langchain]')")
    pytest.importorskip("llama_index.core", reason="llama-index-core not installed "
                        "(pip install -e '.[llamaindex]')")
    pytest.importorskip("llama_index.retrievers.bm25", reason="llama-index-retrievers-bm25 "
                        "not installed (pip install -e '.[llamaindex]')")


def require_agent_frameworks() -> None:
    """Skip the calling test module when an agent framework is not installed."""
    require_frameworks()
    for module, dist, extra in (("langgraph.prebuilt", "langgraph-prebuilt", "langgraph"),
                                ("langchain_openai", "langchain-openai", "langgraph"),
                                ("llama_index.llms.openai_like",
                                 "llama-index-llms-openai-like", "llamaindex")):
        pytest.importorskip(module, reason=f"{dist} not installed "
                            f"(pip install -e '.[{extra}]')")


require_frameworks()

with warnings.catch_warnings():  # langchain-community warns about its own deprecation
    warnings.simplefilter("ignore", DeprecationWarning)
    from langchain_community.retrievers import BM25Retriever as LcBM25

__all__ = ["LcBM25"]
