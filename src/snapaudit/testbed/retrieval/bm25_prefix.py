"""The in-process BM25 top k of a prefix: all its shards scored in one vectorized pass.

:meth:`~snapaudit.testbed.retrieval.bm25_shard.ShardIndex.top` scores one shard (what a shard
server answers); in one process the shards of a prefix need not be scored one by one. Here
their postings are joined in one array of prefix rows (shard ``j``'s rows offset by the
documents of shards ``0 .. j-1``), so a query costs a fixed number of numpy operations
whatever the number of shards and segments, instead of about thirty per shard.

Exactly the same scores: every element is the same float64 expression as in
:meth:`ShardIndex.top` (the per-document ``k1 * (1 - b + b * dl / avgdl)`` comes from the
shard's own table), and ``np.add.at`` adds each row's contributions in query-term order, as
there. The top k is cut once over the whole prefix (every row tied at the cut is kept) and
ordered by score descending, then document id ascending: the list :func:`merge_top` makes of
the shards' own top-k lists.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from snapaudit.testbed.retrieval.bm25_shard import ShardIndex, Terms, top_mask


class PrefixScorer:
    """Scratch arrays of one prefix's shards: the accumulator, per-document norms, offsets."""

    def __init__(self, shards: list[ShardIndex]):
        self.shards = shards
        sizes = [s.docs for s in shards]
        self.offsets = np.cumsum([0, *sizes]).astype(np.int64)
        self._acc = np.zeros(int(self.offsets[-1]), dtype=np.float64)
        self._norms: tuple[tuple[float, float, float], Any] | None = None

    def _doc_norms(self, avgdl: float, k1: float, b: float) -> Any:
        key = (avgdl, k1, b)
        if self._norms is None or self._norms[0] != key:
            parts = [s.doc_norms(avgdl, k1, b) for s in self.shards]
            self._norms = (key, np.concatenate(parts) if parts else np.zeros(0))
        return self._norms[1]

    def top(self, terms: Terms, idfs: list[float], avgdl: float, k1: float, b: float,
            k: int) -> list[tuple[float, str]]:
        """(score, id) of the prefix's top k, ordered (the postings were looked up by the
        shards' ``stats`` for these terms)."""
        rows_l: list[Any] = []
        tfs_l: list[Any] = []
        weights: list[Any] = []
        offs: list[int] = []
        used = 0
        for (term, qtf), idf in zip(terms, idfs, strict=True):
            w = qtf * np.float64(idf)
            before = len(rows_l)
            for j, shard in enumerate(self.shards):
                off = int(self.offsets[j])
                for rows, tfs in shard.postings_of(term):
                    rows_l.append(rows)
                    tfs_l.append(tfs)
                    weights.append(w)
                    offs.append(off)
            used += len(rows_l) > before
        if not rows_l:
            return []
        lens = [len(r) for r in rows_l]
        rows = np.concatenate(rows_l, dtype=np.int64)
        rows += np.repeat(np.array(offs, dtype=np.int64), lens)
        tf = np.concatenate(tfs_l, dtype=np.float64)
        weight = np.repeat(np.array(weights), lens)
        norm = self._doc_norms(avgdl, k1, b)[rows]
        norm += tf  # weight * tf / (tf + norm), the same roundings per element as a shard's
        tf *= weight
        tf /= norm
        acc = self._acc
        np.add.at(acc, rows, tf)
        vals = acc[rows]  # every copy of a repeated row reads its one final score
        acc[rows] = 0.0
        if used > 1:  # a row is in at most one list per term: the best k * used hold the top k
            cand = top_mask(vals, k * used)
            rows, first = np.unique(rows[cand], return_index=True)
            vals = vals[cand][first]
        keep = top_mask(vals, k)
        rows, vals = rows[keep], vals[keep]
        shard_of = np.searchsorted(self.offsets, rows, side="right") - 1
        local = rows - self.offsets[shard_of]
        hits = [(-v, bytes(self.shards[j].ids[r]).decode())
                for v, j, r in zip(vals.tolist(), shard_of.tolist(), local.tolist(),
                                   strict=True)]
        hits.sort()
        return [(-neg, doc_id) for neg, doc_id in hits[:k]]
