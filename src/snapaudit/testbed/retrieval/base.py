"""The retriever interface: top-k over the first ``prefix`` shards of a corpus (in-process
retrievers also over any set of shards: :meth:`InProcessRetriever.search_shards`).

Retrieval is awaited (:meth:`Retriever.asearch`): a hosted search service is called through
the one async HTTP client and never blocks the event loop. In-process retrievers (BM25,
dense) search synchronously (:meth:`InProcessRetriever.search`, what their own callers and
benchmarks use) and are awaited through the same interface.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from snapaudit.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Document:
    doc_id: str
    url: str
    text: str


@dataclass(frozen=True, slots=True)
class Hit:
    doc_id: str
    score: float


class Retriever(Protocol):
    def spec(self) -> dict[str, Any]:
        """Backend, parameters and index hashes that shape results."""
        ...

    async def asearch(self, query: str, prefix: int, k: int) -> list[Hit]:
        """Top-``k`` hits over shards ``0 .. prefix-1``, ties broken by doc id."""
        ...

    def document(self, doc_id: str) -> Document:
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


class InProcessRetriever(ABC):
    """A retriever that searches in this process: synchronous inside, awaited outside."""

    @abstractmethod
    def search(self, query: str, prefix: int, k: int) -> list[Hit]:
        """Top-``k`` hits over shards ``0 .. prefix-1``, ties broken by doc id."""

    async def asearch(self, query: str, prefix: int, k: int) -> list[Hit]:
        return self.search(query, prefix, k)

    @property
    def n_shards(self) -> int:
        """Shards of the corpus."""
        raise NotImplementedError

    def search_shards(self, query: str, shards: Sequence[int], k: int) -> list[Hit]:
        """Top-``k`` hits over any set of shards (a corpus path's prefix), exactly as an
        index built on those shards alone; ties broken by doc id."""
        raise ConfigError(f"{type(self).__name__} cannot search a set of shards "
                          "(testbed.paths needs bm25 or dense retrieval)")

    async def asearch_shards(self, query: str, shards: Sequence[int], k: int) -> list[Hit]:
        return self.search_shards(query, shards, k)

    async def aclose(self) -> None:
        return None
