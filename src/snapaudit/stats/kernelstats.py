"""One kernel's numbers in the results: within, cross, D and its bootstrap interval.

The answer kernels (``kernels.<name>``) and the trajectory kernels
(``trajectory.kernels.<name>``, :mod:`snapaudit.stats.trajectory`) are written and read back
as the same record.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from snapaudit.stats.bootstrap import Interval
from snapaudit.stats.churn import PerQuestion


@dataclass(frozen=True, slots=True)
class KernelStats:
    """Within, Cross (percent), D, its lower bound and interval (pp), share of draws <= 0."""

    kernel: str
    within: float
    cross: float
    d_hat: float
    lcb95: float
    ci95: tuple[float, float]
    p_nonpositive: float
    judge: str | None = None
    nontransitive_triangles: int | None = None
    nontransitive_questions: int | None = None
    # the judge's consistency: labelled pairs whose normalized answers are identical,
    # and how many of them it labelled "same" (identical answers are never short-circuited)
    identical_pairs: int | None = None
    identical_labelled_same: int | None = None
    method: str = "draws"  # of the interval: "exact" or "draws"
    ucb95: float | None = None  # one-sided 95% upper bound (pp); None in older documents

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"within": self.within, "cross": self.cross,
                                  "d_hat": self.d_hat, "lcb95": self.lcb95, "ucb95": self.ucb95,
                                  "ci95": list(self.ci95), "p_nonpositive": self.p_nonpositive,
                                  "method": self.method}
        if self.kernel == "semantic":
            out.update(judge=self.judge, nontransitive_triangles=self.nontransitive_triangles,
                       nontransitive_questions=self.nontransitive_questions,
                       identical_pairs=self.identical_pairs,
                       identical_labelled_same=self.identical_labelled_same)
        return out


def kernel_stats(name: str, pq: PerQuestion, iv: Interval, **extra: Any) -> KernelStats:
    """One kernel's record from its per-question values and its interval (pp)."""
    return KernelStats(name, 100 * pq.within, 100 * pq.cross, 100 * pq.d_hat, iv.lcb95,
                       iv.ci95, iv.p_nonpositive, method=iv.method, ucb95=iv.ucb95, **extra)
