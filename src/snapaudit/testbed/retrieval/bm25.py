"""Embedded BM25 over nested corpus prefixes, exact for every prefix from one build.

For disjoint shards the collection statistics add up: N, the total length and every document
frequency of a prefix are sums over its shards. The index therefore stores, per shard, its
documents' lengths and term-document postings (CSR, in fixed-size segments so the build
memory is bounded), and the scorer sums the statistics of shards ``0 .. k-1`` at query time.
The score of a document in state k is exactly what an index built on that prefix alone gives
(and the same holds for any set of shards, :meth:`Bm25Retriever.search_shards`: the shard
orders of ``[testbed.paths]`` share this one build):

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
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from snapaudit.errors import ConfigError, IntegrityError
from snapaudit.hashing import sha256_file
from snapaudit.testbed.retrieval.base import Document, Hit, InProcessRetriever
from snapaudit.testbed.retrieval.bm25_build import INDEX_VERSION
from snapaudit.testbed.retrieval.bm25_prefix import PrefixScorer
from snapaudit.testbed.retrieval.bm25_shard import ShardIndex, Terms
from snapaudit.testbed.retrieval.tokenize import TOKENIZER, tokenize

__all__ = ["INDEX_VERSION", "Bm25Retriever", "PrefixStats", "merge_top", "open_shards",
           "prefix_stats", "read_meta"]


def read_meta(corpus_dir: Path) -> dict[str, Any]:
    meta_path = corpus_dir / "bm25" / "meta.json"
    if not meta_path.exists():
        raise ConfigError(f"{corpus_dir}: no BM25 index (rebuild the corpus)")
    meta: dict[str, Any] = json.loads(meta_path.read_text(encoding="utf-8"))
    if meta["tokenizer"] != TOKENIZER or meta["version"] != INDEX_VERSION:
        raise IntegrityError(f"{meta_path}: index built with another tokenizer/version")
    return meta


def open_shards(corpus_dir: Path, meta: dict[str, Any], shards: range) -> dict[int, ShardIndex]:
    return {j: ShardIndex(corpus_dir, j, meta["shards"][j]["segments"],
                          meta["shards"][j]["docs"], meta["shards"][j]["tokens"])
            for j in shards}


class PrefixStats:
    """N, avgdl and the Lucene idf of every query term over a prefix (sums of shard stats)."""

    def __init__(self, terms: Terms, per_shard: list[tuple[int, int, list[int]]]):
        self.docs = sum(s[0] for s in per_shard)
        tokens = sum(s[1] for s in per_shard)
        self.avgdl = tokens / self.docs if self.docs else 0.0
        df = [sum(s[2][i] for s in per_shard) for i in range(len(terms))]
        keep = [i for i, d in enumerate(df) if d > 0]
        self.terms: Terms = [terms[i] for i in keep]
        self.idfs = [float(np.log(1.0 + (self.docs - df[i] + 0.5) / (df[i] + 0.5))) for i in keep]


def prefix_stats(tokens: list[str], per_shard: list[tuple[int, int, list[int]]]) -> PrefixStats:
    return PrefixStats(list(Counter(tokens).items()), per_shard)


def query_terms(query: str) -> Terms:
    return list(Counter(tokenize(query)).items())


def merge_top(lists: list[list[tuple[float, str]]], k: int) -> list[Hit]:
    """The exact top k of shard lists: score descending, then document id ascending."""
    cands = sorted(((-score, doc_id) for lst in lists for score, doc_id in lst))
    return [Hit(doc_id, -neg) for neg, doc_id in cands[:k]]


class Bm25Retriever(InProcessRetriever):
    """BM25 top-k over the first ``prefix`` shards of a built corpus (in this process)."""

    def __init__(self, corpus_dir: str | Path, k1: float = 0.9, b: float = 0.4):
        from snapaudit.testbed.corpus.store import DocStore

        self.dir = Path(corpus_dir)
        self.k1, self.b = k1, b
        self.store = DocStore(self.dir)
        self.meta = read_meta(self.dir)
        self._meta_sha = sha256_file(self.dir / "bm25" / "meta.json")
        self._shards: dict[int, ShardIndex] = {}
        self._scorers: dict[tuple[int, ...], PrefixScorer] = {}  # one per set of shards

    def spec(self) -> dict[str, Any]:
        return {"kind": "bm25", "k1": self.k1, "b": self.b, "idf": "lucene",
                "tf": "tf/(tf+k1*(1-b+b*dl/avgdl))", "tokenizer": TOKENIZER,
                "index_version": INDEX_VERSION, "index_meta_sha256": self._meta_sha,
                "corpus": self.store.manifest.hash()}

    @property
    def n_shards(self) -> int:
        return len(self.meta["shards"])

    def shards(self, prefix: int) -> list[ShardIndex]:
        """The shard indexes of a prefix, opened on first use (memory grows with the prefix)."""
        n = self.n_shards
        if not 0 <= prefix <= n:
            raise ConfigError(f"prefix {prefix} outside 0..{n} shards")
        return self.subset(range(prefix))

    def subset(self, shards: Sequence[int]) -> list[ShardIndex]:
        """The shard indexes of any set of shards (ascending, each once), opened on first use."""
        n = self.n_shards
        chosen = sorted(set(shards))
        if chosen and not (chosen[0] >= 0 and chosen[-1] < n):
            raise ConfigError(f"shards {chosen} outside 0..{n - 1}")
        for j in chosen:
            if j not in self._shards:
                self._shards.update(open_shards(self.dir, self.meta, range(j, j + 1)))
        return [self._shards[j] for j in chosen]

    def _stats(self, terms: Terms, shards: list[ShardIndex]) -> PrefixStats:
        words = [t for t, _ in terms]
        return PrefixStats(terms, [s.stats(words) for s in shards])

    def shard_scores(self, tokens: list[str], prefix: int | Sequence[int]) -> list[Any]:
        """float64 scores of every document of shards ``0 .. prefix-1`` (or of the shards
        given, ascending), one array per shard."""
        shards = self.shards(prefix) if isinstance(prefix, int) else self.subset(prefix)
        st = self._stats(list(Counter(tokens).items()), shards)
        return [s.scores(st.terms, st.idfs, st.avgdl, self.k1, self.b) for s in shards]

    def search(self, query: str, prefix: int, k: int) -> list[Hit]:
        return self._search(query, self.shards(prefix), tuple(range(prefix)), k)

    def search_shards(self, query: str, shards: Sequence[int], k: int) -> list[Hit]:
        """Top-k over any set of shards: N, total length and df are sums over exactly
        those shards, so the scores are those of an index built on them alone."""
        return self._search(query, self.subset(shards), tuple(sorted(set(shards))), k)

    def _search(self, query: str, shards: list[ShardIndex], key: tuple[int, ...],
                k: int) -> list[Hit]:
        st = self._stats(query_terms(query), shards)
        if not st.terms:
            return []
        scorer = self._scorers.get(key)
        if scorer is None:  # the scratch accumulator of this set of shards
            scorer = self._scorers[key] = PrefixScorer(shards)
        return [Hit(doc_id, score)
                for score, doc_id in scorer.top(st.terms, st.idfs, st.avgdl, self.k1, self.b, k)]

    def document(self, doc_id: str) -> Document:
        return self.store.document(doc_id)
