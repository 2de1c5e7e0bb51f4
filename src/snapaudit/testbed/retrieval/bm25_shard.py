"""One shard's BM25 postings, memory-mapped, scored with statistics given from outside.

Exact prefix scoring splits in two phases, so that shards can live anywhere (this process,
a local process, a Ray actor): :meth:`ShardIndex.stats` gives a shard's document count, total
length and document frequencies; the caller sums them over the prefix's shards into the
prefix's N, avgdl and idf; :meth:`ShardIndex.top` scores with those global values and
returns the shard's best rows. Merging the shards' lists by (score desc, id asc) is exactly
the top-k of one index built on the prefix alone: the per-document arithmetic is the same
float64 expression in the same term order.

Query cost grows with the postings a query touches, not with the shard size: scores
accumulate term at a time into a per-shard scratch array, only at the touched rows, which are
read back, reset and cut to the top k (every row tied at the cut is kept, so ties break by
document id in the merge).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from snapaudit.testbed.retrieval.bm25_build import shard_dir


def mapped(path: Path) -> Any:
    """A read-only, memory-mapped array as a plain ndarray view (no memmap subclass cost)."""
    return np.load(path, mmap_mode="r").view(np.ndarray)


class _Segment:
    def __init__(self, path: Path):
        self.terms = mapped(path / "terms.npy")
        self.indptr = mapped(path / "indptr.npy")
        self.rows = mapped(path / "rows.npy")
        self.tfs = mapped(path / "tfs.npy")

    def postings(self, term: bytes) -> tuple[Any, Any] | None:
        i = int(np.searchsorted(self.terms, term))
        if i >= len(self.terms) or bytes(self.terms[i]) != term:
            return None
        lo, hi = int(self.indptr[i]), int(self.indptr[i + 1])
        return self.rows[lo:hi], self.tfs[lo:hi]

    def postings_many(self, keys: Any, out: list[list[tuple[Any, Any]]]) -> None:
        """Append the postings of every term of ``keys`` (an ``S`` array) to ``out[i]``
        (one vectorized binary search; the few hits are then read one by one)."""
        terms = self.terms
        n = len(terms)
        if not n:
            return
        indptr, rows, tfs = self.indptr, self.rows, self.tfs
        for i, at in enumerate(terms.searchsorted(keys).tolist()):
            if at < n and terms[at] == keys[i]:
                a, z = int(indptr[at]), int(indptr[at + 1])
                out[i].append((rows[a:z], tfs[a:z]))


Terms = list[tuple[str, int]]  # (term, count in the query), in first-occurrence order


class ShardIndex:
    """The BM25 postings and document lengths of shard ``shard`` (opened lazily, mmapped)."""

    def __init__(self, corpus_dir: str | Path, shard: int, segments: int, docs: int,
                 tokens: int):
        from snapaudit.testbed.corpus.manifest import shard_path

        self.dir, self.shard = Path(corpus_dir), shard
        self.docs, self.tokens = docs, tokens
        base = shard_dir(self.dir, shard)
        self.doclen = mapped(base / "doclen.npy")
        self.segments = [_Segment(base / f"seg-{s:03d}") for s in range(segments)]
        self.ids = mapped(shard_path(self.dir, shard, ".ids.npy"))
        self._acc: Any = None
        self._norms: dict[tuple[float, float, float], Any] = {}
        self._maxdl = -1
        self._recent: dict[str, list[tuple[Any, Any]]] = {}  # postings of the last query

    def postings_of(self, term: str) -> list[tuple[Any, Any]]:
        found = self._recent.get(term)
        if found is None:
            key = term.encode()
            found = [p for seg in self.segments if (p := seg.postings(key)) is not None]
            if len(self._recent) > 64:
                self._recent.clear()
            self._recent[term] = found
        return found

    def stats(self, terms: list[str]) -> tuple[int, int, list[int]]:
        """(documents, total length, document frequency of every term) of this shard."""
        missing = [t for t in terms if t not in self._recent]
        if missing:  # one binary search per segment for all the query's new terms
            if len(self._recent) + len(missing) > 64:
                self._recent.clear()
            keys = np.array([t.encode() for t in missing], dtype=np.bytes_)
            lists: list[list[tuple[Any, Any]]] = [[] for _ in missing]
            for seg in self.segments:
                seg.postings_many(keys, lists)
            self._recent.update(zip(missing, lists, strict=True))
        return self.docs, self.tokens, [sum(len(r) for r, _ in self.postings_of(t))
                                        for t in terms]

    def _norm_table(self, avgdl: float, k1: float, b: float) -> Any:
        """``k1 * (1 - b + b * dl / avgdl)`` for every document length ``dl`` of the shard
        (a table over lengths, not documents; kept for the last few prefixes): the same
        float64 expression per element as on the documents' lengths themselves."""
        key = (avgdl, k1, b)
        table = self._norms.get(key)
        if table is None:
            if len(self._norms) >= 8:
                self._norms.clear()
            dl = np.arange(self._maxdl + 1, dtype=np.int32)
            table = self._norms[key] = k1 * (1.0 - b + b * dl / avgdl)
        return table

    def _norms_of(self, dl: Any, avgdl: float, k1: float, b: float) -> Any:
        """``k1 * (1 - b + b * dl / avgdl)`` of the lengths ``dl`` (from the table if short)."""
        if self._maxdl < 0:
            self._maxdl = int(self.doclen.max()) if len(self.doclen) else 0
        if self._maxdl < _MAX_TABLE:
            return self._norm_table(avgdl, k1, b)[dl]
        return k1 * (1.0 - b + b * dl / avgdl)

    def doc_norms(self, avgdl: float, k1: float, b: float) -> Any:
        """The norm of every document of the shard (a new array)."""
        return self._norms_of(self.doclen, avgdl, k1, b)

    def _accumulate(self, terms: Terms, idfs: list[float], avgdl: float, k1: float,
                    b: float, acc: Any) -> tuple[Any, int] | None:
        """Add every query term's contribution to ``acc`` at its postings' rows, in term
        order (one vectorized pass over all the query's postings of the shard, then
        ``np.add.at``, which adds element by element in that order: the same sums as term
        at a time). Returns the touched rows and how many posting lists they came from (a
        row is in a list at most once)."""
        rows_l: list[Any] = []
        tfs_l: list[Any] = []
        weights: list[Any] = []
        for (term, qtf), idf in zip(terms, idfs, strict=True):
            w = qtf * np.float64(idf)
            for rows, tfs in self.postings_of(term):
                rows_l.append(rows)
                tfs_l.append(tfs)
                weights.append(w)
        if not rows_l:
            return None
        if len(rows_l) == 1:
            rows, tf = rows_l[0], tfs_l[0].astype(np.float64)
            weight: Any = weights[0]
        else:
            rows, tf = np.concatenate(rows_l), np.concatenate(tfs_l).astype(np.float64)
            weight = np.repeat(np.array(weights), [len(r) for r in rows_l])
        norm = self._norms_of(self.doclen[rows], avgdl, k1, b)
        norm += tf  # in place: weight * tf / (tf + norm), the same roundings per element
        tf *= weight
        tf /= norm
        np.add.at(acc, rows, tf)
        return rows, len(rows_l)

    def scores(self, terms: Terms, idfs: list[float], avgdl: float, k1: float,
               b: float) -> Any:
        """float64 scores of every document of the shard (tests and diagnostics)."""
        acc = np.zeros(self.docs, dtype=np.float64)
        self._accumulate(terms, idfs, avgdl, k1, b, acc)
        return acc

    def top(self, terms: Terms, idfs: list[float], avgdl: float, k1: float, b: float,
            k: int) -> list[tuple[float, str]]:
        """(score, id) of the rows that can be in the top k (all rows tied at the cut)."""
        if self._acc is None:
            self._acc = np.zeros(self.docs, dtype=np.float64)
        acc = self._acc
        touched = self._accumulate(terms, idfs, avgdl, k1, b, acc)
        if touched is None:
            return []
        rows, lists = touched
        vals = acc[rows]  # every copy of a repeated row reads its one final score
        acc[rows] = 0.0
        if lists > 1:
            # a row has at most `lists` copies, so the best k * lists entries hold every row
            # of the top k; distinct rows are then cut to k among those few
            cand = top_mask(vals, k * lists)
            rows, first = np.unique(rows[cand], return_index=True)
            vals = vals[cand][first]
        keep = top_mask(vals, k)
        return [(float(v), bytes(self.ids[r]).decode())
                for v, r in zip(vals[keep].tolist(), rows[keep].tolist(), strict=True)]


_MAX_TABLE = 1 << 22  # longest document length served by a norm table (else computed)


def top_mask(vals: Any, k: int) -> Any:
    """Positive values that can be in the top k (every value tied at the cut)."""
    pos = vals > 0
    n = int(pos.sum())
    if n <= k:
        return pos
    cut = np.partition(vals[pos], n - k)[n - k]
    return vals >= cut
