"""Build the retriever a testbed config names; backends are imported lazily."""

from __future__ import annotations

from snapaudit.registry import Entry, Registry
from snapaudit.testbed.retrieval.base import Retriever
from snapaudit.testbed.retrieval.config import TestbedConfig

RETRIEVERS: Registry[Retriever] = Registry("retriever kind", {
    "bm25": "snapaudit.testbed.retrieval.builders:bm25",
    "dense": Entry("snapaudit.testbed.retrieval.builders:dense", extra="dense"),
    "http": "snapaudit.testbed.retrieval.builders:http",
})


def build_retriever(testbed: TestbedConfig) -> Retriever:
    return RETRIEVERS.build(testbed.retriever.kind, testbed)
