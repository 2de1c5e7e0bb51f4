"""Within, cross and excess churn D per question and overall.

For question i, old state L (answers a_1..a_r) and new state H (b_1..b_r):
within_L = mean k(a_j, a_l) over j < l, within_H likewise, w_i = (within_L + within_H) / 2,
c_i = mean k(a_j, b_l) over all r x r pairs, D_i = w_i - c_i (k in {0, 1}, or in [0, 1] for
a graded kernel such as the trajectory kernel ``documents``). Values here are fractions;
the results report them x 100 (percent, and percentage points for D).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snapaudit.stats.kernels import AnswerGrid, Kernel, block, pair_matrix, within_mean


@dataclass(frozen=True)
class PerQuestion:
    """Per-question arrays in ``grid.question_ids`` order (fractions in [0, 1])."""

    question_ids: tuple[str, ...]
    w: np.ndarray
    c: np.ndarray

    @property
    def d(self) -> np.ndarray:
        d: np.ndarray = self.w - self.c
        return d

    @property
    def within(self) -> float:
        return float(self.w.mean())

    @property
    def cross(self) -> float:
        return float(self.c.mean())

    @property
    def d_hat(self) -> float:
        return float(self.d.mean())


def per_question(grid: AnswerGrid, kernel: Kernel, old: str, new: str) -> PerQuestion:
    """w_i, c_i (and D_i = w_i - c_i) of every question for one kernel."""
    grid.require_states([old, new])
    r = grid.repeats
    k = pair_matrix(kernel, grid, (old, new))  # int8: summed into int64 below
    ju, lu = np.triu_indices(r, 1)
    w_old, w_new = k[:, ju, lu], k[:, r + ju, r + lu]
    cross = k[:, :r, r:].reshape(grid.n, r * r)
    missing = (w_old < 0).any(axis=1) | (w_new < 0).any(axis=1) | (cross < 0).any(axis=1)
    for i in np.flatnonzero(missing)[:1]:  # the error the question-by-question walk raises
        _scalar(kernel, grid, grid.question_ids[int(i)], old, new)
    pairs = len(ju)
    # the same float operations as the scalar walk: integer counts, then the divisions (a
    # kernel of values in [0, 1], such as a Jaccard index, sums its floats)
    acc = np.int64 if k.dtype.kind in "iu" else np.float64
    w = (w_old.sum(axis=1, dtype=acc) / pairs + w_new.sum(axis=1, dtype=acc) / pairs) / 2
    c = cross.sum(axis=1, dtype=acc) / (r * r)
    return PerQuestion(grid.question_ids, w, c)


def _scalar(kernel: Kernel, grid: AnswerGrid, qid: str, old: str, new: str) -> tuple[float, float]:
    """w_i and c_i of one question, pair by pair (the reference the arrays reproduce)."""
    w = (within_mean(kernel, grid, qid, old) + within_mean(kernel, grid, qid, new)) / 2
    return w, float(block(kernel, grid, qid, old, new).mean())

