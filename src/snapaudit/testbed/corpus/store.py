"""Random access to the documents of a built corpus (memory-mapped row offsets and ids)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from snapaudit.testbed.corpus.manifest import load_manifest, shard_of, shard_path
from snapaudit.testbed.retrieval.base import Document


class DocStore:
    """Random access to a built corpus's documents by shard row or by id (memory-mapped)."""

    def __init__(self, corpus_dir: str | Path):
        self.dir = Path(corpus_dir)
        self.manifest = load_manifest(self.dir)
        n = len(self.manifest.shards)
        self._offsets = [self._load(j, ".offsets.npy") for j in range(n)]
        self._ids = [self._load(j, ".ids.npy") for j in range(n)]
        self._sorted = [self._load(j, ".ids_sorted.npy") for j in range(n)]
        self._order = [self._load(j, ".order.npy") for j in range(n)]

    def _load(self, shard: int, suffix: str) -> Any:
        return np.load(shard_path(self.dir, shard, suffix), mmap_mode="r").view(np.ndarray)

    @property
    def n_shards(self) -> int:
        return len(self._ids)

    def doc_id(self, shard: int, row: int) -> str:
        return bytes(self._ids[shard][row]).decode()

    def ids(self, shard: int) -> list[str]:
        return [bytes(b).decode() for b in self._ids[shard]]

    def row(self, shard: int, row: int) -> Document:
        with open(shard_path(self.dir, shard), "rb") as f:
            f.seek(int(self._offsets[shard][row]))
            rec = json.loads(f.readline())
        return Document(rec["id"], rec["url"], rec["text"])

    def locate(self, doc_id: str) -> tuple[int, int]:
        key = doc_id.encode()
        j = shard_of(doc_id, self.manifest.seed, self.n_shards)
        arr = self._sorted[j]
        i = int(np.searchsorted(arr, key))
        if i < len(arr) and bytes(arr[i]) == key:
            return j, int(self._order[j][i])
        raise KeyError(doc_id)

    def document(self, doc_id: str) -> Document:
        return self.row(*self.locate(doc_id))

    def iter_shard(self, shard: int) -> Iterator[Document]:
        return self.iter_file(shard_path(self.dir, shard))

    @staticmethod
    def iter_file(path: Path) -> Iterator[Document]:
        """The documents of one shard file, in row order (streamed)."""
        with open(path, "rb") as f:
            for line in f:
                rec = json.loads(line)
                yield Document(rec["id"], rec["url"], rec["text"])
