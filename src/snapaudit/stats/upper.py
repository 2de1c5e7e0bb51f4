"""The one-sided upper bound of D (``ucb95``): it counts one unseen churning question.

A bootstrap resamples only the values it has seen, so its upper bound never passes the
sample's largest D_i. When churn sits in a few questions (most D_i = 0, a few flips at 1) a
sample that holds few or none of them has an upper bound near 0, and a COMPATIBLE verdict
("answers move less than M pp") would pass at a margin the truth exceeds: the fixed design's
plain 95th percentile did so in 7.8% of audits at M = 1 pp (docs/analysis.md).

So every upper bound of D (the fixed design's ``ucb95`` and each sequential look's) is the
quantile of the bootstrap of the questions **plus one pseudo-question with D_i = 1** in
every kernel (:data:`TOP`, the top of the range D_i can take: w_i <= 1, c_i >= 0),
resampled like a question (its own cluster under cluster resampling). With no churning
question among n the bound is then about j / (n + 1) with P(Poisson(1) >= j) <= the level's
tail, not 0; the shift is at most (1 - D_hat) / (n + 1) (0.25 pp at 400 questions, 0.01 pp at
10,000). The point estimate and the lower bound are the real questions' alone: the lower
bound's null is D = 0, where for a kernel whose sameness is an equivalence every question's
mean D_i is 0 (docs/analysis.md, "Sequential looks").
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from snapaudit.stats.bootstrap import Bootstrapped, Interval, Method
from snapaudit.stats.cluster import Resampling

TOP = 1.0  # the top of every kernel's D_i range: the upper bound's pseudo-question


def with_top(values: np.ndarray, res: Resampling) -> tuple[np.ndarray, Resampling]:
    """``values`` (n, m) with one pseudo-question at :data:`TOP` in every kernel, its own
    cluster under cluster resampling."""
    out = np.vstack([values, np.full((1, values.shape[1]), TOP)])
    if res.groups is None:
        return out, res
    top = int(res.groups.max()) + 1 if res.groups.size else 0
    return out, Resampling("cluster", np.concatenate([res.groups, [top]]))


def upper_bootstrap(values: np.ndarray, res: Resampling, draws: int, seed: int, *,
                    method: Method, repeats: int) -> Bootstrapped:
    """The bootstrap the upper bounds of ``values``' column means are read from."""
    padded, pres = with_top(values, res)
    return pres.intervals(padded, draws, seed, method=method, repeats=repeats)


def intervals(values: np.ndarray, res: Resampling, draws: int, seed: int, *, method: Method,
              repeats: int, scale: float = 100.0) -> tuple[Interval, ...]:
    """Each column's interval of the joint bootstrap of ``values``, its ``ucb95`` read from
    :func:`upper_bootstrap` (every reported upper bound of D)."""
    boot = res.intervals(values, draws, seed, method=method, repeats=repeats)
    upper = upper_bootstrap(values, res, draws, seed, method=method, repeats=repeats)
    return tuple(replace(boot.summary(col, scale=scale),
                         ucb95=upper.summary(col, scale=scale).ucb95)
                 for col in range(values.shape[1]))
