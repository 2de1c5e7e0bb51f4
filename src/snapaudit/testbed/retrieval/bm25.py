"""Embedded BM25 over nested corpus prefixes, exact for every prefix from one build.

For disjoint shards the collection statistics add up: N, the total length and every document
frequency of a prefix are sums over its shards. The index therefore stores, per shard, its
documents' lengths and term-document postings (CSR, in fixed-size segments so the build
memory is bounded), and the scorer sums the statistics of shards ``0 .. k-1`` at query time.
The score of a document in state k is exactly what an index built on that prefix alone gives:

    idf(t)   = ln(1 + (N - df_t + 0.5) / (df_t + 0.5))                (Lucene)
    score    = sum over query tokens t of idf(t) * tf / (tf + k1 * (1 - b + b * dl / avgdl))

in float64 (the Lucene variant as bm25s implements it; a query token repeated counts again).
Only documents that share at least one token with the query are hits; hits are ordered by
score, descending, then by document id, ascending, so ties are deterministic.

Layout: ``bm25/meta.json``; ``bm25/shard-00/doclen.npy``; ``bm25/shard-00/seg-000/`` with
``terms.npy`` (sorted UTF-8 terms), ``indptr.npy``, ``rows.npy`` (shard rows) and ``tfs.npy``.
"""

from __future__ import annotations

import json
from array import array
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from snapaudit.errors import ConfigError, IntegrityError
from snapaudit.hashing import canonical_json, sha256_file
from snapaudit.progress import Progress, SilentProgress
from snapaudit.testbed.retrieval.base import Document, Hit
from snapaudit.testbed.retrieval.tokenize import TOKENIZER, tokenize

INDEX_VERSION = 1


def _shard_dir(corpus_dir: Path, shard: int) -> Path:
    return corpus_dir / "bm25" / f"shard-{shard:02d}"


class _SegmentWriter:
    """Accumulates the postings of up to ``limit`` documents, then writes one CSR segment."""

    def __init__(self, out: Path):
        self.out = out
        self.vocab: dict[str, int] = {}
        self.terms, self.rows, self.tfs = array("q"), array("q"), array("q")

    def add(self, row: int, counts: Counter[str]) -> None:
        vocab = self.vocab
        for term, tf in counts.items():
            self.terms.append(vocab.setdefault(term, len(vocab)))
            self.rows.append(row)
            self.tfs.append(tf)

    def write(self) -> None:
        self.out.mkdir(parents=True, exist_ok=True)
        words = np.array([t.encode() for t in self.vocab] or [b""], dtype=np.bytes_)
        words = words[: len(self.vocab)]
        order = np.argsort(words, kind="stable")
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        tids = rank[np.frombuffer(self.terms, dtype=np.int64)] if len(self.terms) else \
            np.zeros(0, dtype=np.int64)
        rows = np.frombuffer(self.rows, dtype=np.int64)
        perm = np.lexsort((rows, tids))
        indptr = np.zeros(len(order) + 1, dtype=np.int64)
        np.cumsum(np.bincount(tids, minlength=len(order)), out=indptr[1:])
        np.save(self.out / "terms.npy", words[order])
        np.save(self.out / "indptr.npy", indptr)
        np.save(self.out / "rows.npy", rows[perm].astype(np.int32))
        np.save(self.out / "tfs.npy", np.frombuffer(self.tfs, dtype=np.int64)[perm]
                .astype(np.int32))


def _build_shard(docs: Iterator[Document], out: Path, segment_docs: int) -> dict[str, int]:
    lengths = array("q")
    seg, segments = None, 0
    for row, doc in enumerate(docs):
        if seg is None:
            seg = _SegmentWriter(out / f"seg-{segments:03d}")
        counts = Counter(tokenize(doc.text))
        lengths.append(sum(counts.values()))
        seg.add(row, counts)
        if len(lengths) % segment_docs == 0:
            seg.write()
            seg, segments = None, segments + 1
    if seg is not None:
        seg.write()
        segments += 1
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "doclen.npy", np.frombuffer(lengths, dtype=np.int64).astype(np.int32)
            if lengths else np.zeros(0, dtype=np.int32))
    return {"docs": len(lengths), "tokens": int(sum(lengths)), "segments": segments}


def build_bm25_index(corpus_dir: Path, n_shards: int, *, progress: Progress | None = None,
                     segment_docs: int = 50_000) -> None:
    """Per-shard BM25 statistics of a corpus whose shard files are written."""
    from snapaudit.testbed.corpus.manifest import shard_path
    from snapaudit.testbed.corpus.store import DocStore

    progress = progress if progress is not None else SilentProgress()
    progress.stage("bm25 index", total=n_shards)
    shards = []
    for j in range(n_shards):
        docs = DocStore.iter_file(shard_path(corpus_dir, j))
        shards.append(_build_shard(docs, _shard_dir(corpus_dir, j), segment_docs))
        progress.advance()
    meta = {"version": INDEX_VERSION, "tokenizer": TOKENIZER, "shards": shards}
    (corpus_dir / "bm25" / "meta.json").write_text(canonical_json(meta) + "\n", encoding="utf-8")


def _mapped(path: Path) -> Any:
    """A read-only, memory-mapped array as a plain ndarray view (no memmap subclass cost)."""
    return np.load(path, mmap_mode="r").view(np.ndarray)


class _Segment:
    def __init__(self, path: Path):
        self.terms = _mapped(path / "terms.npy")
        self.indptr = _mapped(path / "indptr.npy")
        self.rows = _mapped(path / "rows.npy")
        self.tfs = _mapped(path / "tfs.npy")

    def postings(self, term: bytes) -> tuple[Any, Any] | None:
        i = int(np.searchsorted(self.terms, term))
        if i >= len(self.terms) or bytes(self.terms[i]) != term:
            return None
        lo, hi = int(self.indptr[i]), int(self.indptr[i + 1])
        return self.rows[lo:hi], self.tfs[lo:hi]


class Bm25Retriever:
    """BM25 top-k over the first ``prefix`` shards of a built corpus."""

    def __init__(self, corpus_dir: str | Path, k1: float = 0.9, b: float = 0.4):
        from snapaudit.testbed.corpus.store import DocStore

        self.dir = Path(corpus_dir)
        self.k1, self.b = k1, b
        self.store = DocStore(self.dir)
        meta_path = self.dir / "bm25" / "meta.json"
        if not meta_path.exists():
            raise ConfigError(f"{self.dir}: no BM25 index (rebuild the corpus)")
        self.meta = json.loads(meta_path.read_text(encoding="utf-8"))
        if self.meta["tokenizer"] != TOKENIZER or self.meta["version"] != INDEX_VERSION:
            raise IntegrityError(f"{meta_path}: index built with another tokenizer/version")
        self._meta_sha = sha256_file(meta_path)
        self._doclen = [_mapped(_shard_dir(self.dir, j) / "doclen.npy")
                        for j in range(len(self.meta["shards"]))]
        self._segments = [
            [_Segment(_shard_dir(self.dir, j) / f"seg-{s:03d}") for s in range(sh["segments"])]
            for j, sh in enumerate(self.meta["shards"])]

    def spec(self) -> dict[str, Any]:
        return {"kind": "bm25", "k1": self.k1, "b": self.b, "idf": "lucene",
                "tf": "tf/(tf+k1*(1-b+b*dl/avgdl))", "tokenizer": TOKENIZER,
                "index_version": INDEX_VERSION, "index_meta_sha256": self._meta_sha,
                "corpus": self.store.manifest.hash()}

    def _check_prefix(self, prefix: int) -> None:
        if not 0 <= prefix <= len(self._segments):
            raise ConfigError(f"prefix {prefix} outside 0..{len(self._segments)} shards")

    def shard_scores(self, tokens: list[str], prefix: int) -> list[Any]:
        """float64 scores of every document of shards ``0 .. prefix-1`` (one array per shard)."""
        self._check_prefix(prefix)
        shards = self.meta["shards"][:prefix]
        n_docs = sum(s["docs"] for s in shards)
        scores = [np.zeros(s["docs"], dtype=np.float64) for s in shards]
        if n_docs == 0:
            return scores
        avgdl = sum(s["tokens"] for s in shards) / n_docs
        for term, qtf in Counter(tokens).items():
            lists = [(j, p) for j in range(prefix) for seg in self._segments[j]
                     if (p := seg.postings(term.encode())) is not None]
            df = sum(len(p[0]) for _, p in lists)
            if df == 0:
                continue
            idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
            for j, (rows, tfs) in lists:
                tf = tfs.astype(np.float64)
                norm = self.k1 * (1.0 - self.b + self.b * self._doclen[j][rows] / avgdl)
                scores[j][rows] += qtf * idf * tf / (tf + norm)
        return scores

    def search(self, query: str, prefix: int, k: int) -> list[Hit]:
        scores = self.shard_scores(tokenize(query), prefix)
        cands: list[tuple[float, str]] = []
        for j, arr in enumerate(scores):
            cands.extend((-float(arr[r]), self.store.doc_id(j, int(r))) for r in _top_rows(arr, k))
        cands.sort()
        return [Hit(doc_id, -neg) for neg, doc_id in cands[:k]]

    def document(self, doc_id: str) -> Document:
        return self.store.document(doc_id)


def _top_rows(scores: Any, k: int) -> Any:
    """Rows with a positive score that can be in the top k (every row tied at the cut)."""
    pos = np.flatnonzero(scores > 0)
    if len(pos) <= k:
        return pos
    cut = np.partition(scores[pos], len(pos) - k)[len(pos) - k]
    return pos[scores[pos] >= cut]
