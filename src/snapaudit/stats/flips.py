"""Strict repeat-stable flips and their share of D.

A question is a strict flip from L to H when every same-state pair is the same (in both
states) and every cross pair is different. Its D_i is then exactly 1; the flips'
contribution to D is sum over flips of D_i / n, and the rest is D minus that.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

from snapaudit.stats.churn import PerQuestion
from snapaudit.stats.kernels import AnswerGrid, Kernel


def stable(kernel: Kernel, grid: AnswerGrid, qid: str, state: str) -> bool:
    """Every pair of the state's repeats is the same."""
    return all(kernel.same(qid, x, y) for x, y in combinations(grid.refs(state), 2))


def all_cross(kernel: Kernel, grid: AnswerGrid, qid: str, sa: str, sb: str, same: bool) -> bool:
    """Every cross pair of the two states is ``same`` (all same, or all different)."""
    return all(kernel.same(qid, x, y) is same for x in grid.refs(sa) for y in grid.refs(sb))


def is_flip(kernel: Kernel, grid: AnswerGrid, qid: str, old: str, new: str) -> bool:
    return (stable(kernel, grid, qid, old) and stable(kernel, grid, qid, new)
            and all_cross(kernel, grid, qid, old, new, same=False))


def flip_ids(kernel: Kernel, grid: AnswerGrid, old: str, new: str) -> tuple[str, ...]:
    return tuple(q for q in grid.question_ids if is_flip(kernel, grid, q, old, new))


@dataclass(frozen=True, slots=True)
class Flips:
    kernel: str
    count: int
    question_ids: tuple[str, ...]
    contribution_pp: float
    rest_pp: float

    def to_json(self) -> dict[str, object]:
        return {"kernel": self.kernel, "count": self.count, "question_ids": list(self.question_ids),
                "contribution_pp": self.contribution_pp, "rest_pp": self.rest_pp}


def flips(kernel: Kernel, grid: AnswerGrid, old: str, new: str, pq: PerQuestion) -> Flips:
    """Strict flips and the decomposition of D (pp) into their contribution and the rest."""
    ids = flip_ids(kernel, grid, old, new)
    chosen = set(ids)
    d = pq.d
    contribution = sum(float(d[i]) for i, q in enumerate(pq.question_ids) if q in chosen)
    contribution_pp = 100 * contribution / grid.n
    return Flips(kernel.name, len(ids), ids, contribution_pp, 100 * pq.d_hat - contribution_pp)
