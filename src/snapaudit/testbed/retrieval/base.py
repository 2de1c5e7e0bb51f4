"""The retriever interface: top-k over the first ``prefix`` shards of a corpus."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


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

    def search(self, query: str, prefix: int, k: int) -> list[Hit]:
        """Top-``k`` hits over shards ``0 .. prefix-1``, ties broken by doc id."""
        ...

    def document(self, doc_id: str) -> Document:
        ...
