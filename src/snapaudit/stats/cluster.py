"""Which unit the bootstrap resamples: whole questions, or whole clusters of questions.

Questions that share a source document, topic or template are not independent; resampling
questions then understates the interval. When every answer row carries a ``cluster`` label,
the bootstrap resamples clusters instead (with replacement, G clusters per draw) and a draw's
statistic is the ratio estimator sum over drawn clusters of the cluster sums / sum of their
sizes (clusters may differ in size).

The cluster stream reuses :func:`snapaudit.stats.bootstrap.whole_question_bootstrap` on the
(G, m + 1) matrix of per-cluster sums and sizes (clusters in sorted label order): its draws are
means over G resampled clusters of [sums, size], and the draw of column c is their ratio. So a
cluster draw costs O(K) in the number K of distinct (sums, size) rows, like a question draw.
Without clusters nothing changes: the question path is the one the results always used.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from snapaudit.errors import InputError
from snapaudit.stats.bootstrap import (
    BootstrapDraws,
    Bootstrapped,
    Method,
    whole_question_bootstrap,
)
from snapaudit.stats.codec import decode
from snapaudit.stats.exact import exact_intervals
from snapaudit.tables import AnswerRow, AnswerTable


def cluster_bootstrap(values: np.ndarray, groups: np.ndarray, draws: int, seed: int
                      ) -> BootstrapDraws:
    """Bootstrap the column means of ``values`` (n,) or (n, m), resampling whole clusters.

    ``groups`` holds each row's cluster index 0..G-1. Point estimates are the plain column
    means (every question weighs the same, as in the question bootstrap).
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 1:
        v = v[:, None]
    g = np.asarray(groups, dtype=np.int64)
    n_groups = int(g.max()) + 1 if g.size else 0
    if n_groups < 2:
        raise InputError("the cluster bootstrap needs at least 2 clusters")
    sums = np.column_stack([np.bincount(g, weights=v[:, c], minlength=n_groups)
                            for c in range(v.shape[1])])
    sizes = np.bincount(g, minlength=n_groups).astype(np.float64)
    inner = whole_question_bootstrap(np.column_stack([sums, sizes]), draws, seed)
    m = v.shape[1]
    return BootstrapDraws(v.mean(axis=0), inner.draws[:, :m] / inner.draws[:, m:m + 1],
                          inner.categories)


@dataclass(frozen=True)
class Resampling:
    """The resampled unit: ``question`` (``groups`` None) or ``cluster``."""

    unit: Literal["question", "cluster"] = "question"
    groups: np.ndarray | None = None
    # read back from results JSON, which holds the number of clusters but not who is in them
    read_clusters: int | None = field(default=None, repr=False)

    @property
    def clusters(self) -> int | None:
        return self.read_clusters if self.groups is None else int(self.groups.max()) + 1

    def bootstrap(self, values: np.ndarray, draws: int, seed: int) -> BootstrapDraws:
        if self.groups is None:
            if self.unit == "cluster":
                raise ValueError("a resampling read from results has no cluster membership")
            return whole_question_bootstrap(values, draws, seed)
        return cluster_bootstrap(values, self.groups, draws, seed)

    def intervals(self, values: np.ndarray, draws: int, seed: int, *, method: Method,
                  repeats: int, columns: Sequence[int] | None = None) -> Bootstrapped:
        """The joint bootstrap of the column means of ``values`` for its intervals: exact
        (:mod:`snapaudit.stats.exact`) for each of ``columns`` (default all) on the grid of
        ``repeats`` when ``method`` is "exact" and questions are resampled; anything else
        from :meth:`bootstrap`'s draws."""
        if method == "exact" and self.groups is None:
            return exact_intervals(values, repeats, lambda: self.bootstrap(values, draws, seed),
                                   columns)
        return self.bootstrap(values, draws, seed)

    def subset(self, keep: np.ndarray) -> Resampling:
        """The resampling of the questions selected by the boolean mask ``keep``."""
        if self.groups is None:
            return self
        _, groups = np.unique(self.groups[keep], return_inverse=True)
        return Resampling("cluster", groups.ravel())

    def to_json(self) -> dict[str, object]:
        return {"unit": self.unit, "clusters": self.clusters}

    @classmethod
    def from_json(cls, data: object) -> Resampling:
        read = data if isinstance(data, Mapping) else {}
        return decode(cls, read, read_clusters=read.get("clusters"))


def resampling(rows: Sequence[AnswerRow], question_ids: Sequence[str]) -> Resampling:
    """Question resampling, or cluster resampling when the rows carry ``cluster`` labels.

    Either no row names a cluster, or every row does and all rows of a question name the same
    one; anything else is an :class:`InputError`.
    """
    if isinstance(rows, AnswerTable):  # the fast reader only takes rows without clusters
        return Resampling()
    labels: dict[str, str] = {}
    unlabelled = 0
    for row in rows:
        if row.cluster is None:
            unlabelled += 1
            continue
        first = labels.setdefault(row.question_id, row.cluster)
        if first != row.cluster:
            raise InputError(f"question {row.question_id!r} names two clusters "
                             f"({first!r} and {row.cluster!r})")
    if not labels:
        return Resampling()
    if unlabelled:
        raise InputError(f"{unlabelled} answer row(s) have no cluster while others do; "
                         "give every row a cluster or none")
    _, groups = np.unique(np.array([labels[q] for q in question_ids]), return_inverse=True)
    return Resampling("cluster", groups.ravel().astype(np.int64))


def icc_anova(values: np.ndarray, groups: np.ndarray) -> float:
    """One-way ANOVA estimate of the intra-cluster correlation of ``values`` (unequal sizes:
    n0 = (N - sum m_g^2 / N) / (G - 1)); 0 when the between-cluster mean square is smaller
    than the within one, and NaN with fewer than 2 clusters or no within-cluster replication."""
    v = np.asarray(values, dtype=np.float64)
    g = np.asarray(groups, dtype=np.int64)
    n, n_groups = v.size, int(g.max()) + 1
    sizes = np.bincount(g, minlength=n_groups).astype(np.float64)
    if n_groups < 2 or n <= n_groups:
        return float("nan")
    means = np.bincount(g, weights=v, minlength=n_groups) / sizes
    msb = float(np.sum(sizes * (means - v.mean()) ** 2) / (n_groups - 1))
    msw = float(np.sum((v - means[g]) ** 2) / (n - n_groups))
    n0 = (n - float(np.sum(sizes ** 2)) / n) / (n_groups - 1)
    denom = msb + (n0 - 1) * msw
    return max(0.0, (msb - msw) / denom) if denom > 0 else 0.0


def design_effect(sizes: np.ndarray, icc: float) -> float:
    """Kish's design effect for a mean over clusters of unequal size:
    1 + (m_bar - 1) ICC with m_bar = sum m_g^2 / sum m_g."""
    m = np.asarray(sizes, dtype=np.float64)
    m_bar = float(np.sum(m ** 2) / np.sum(m))
    return 1.0 + (m_bar - 1.0) * icc
