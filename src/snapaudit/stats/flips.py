"""Strict repeat-stable flips and their share of D.

A question is a strict flip from L to H when every same-state pair is the same (in both
states) and every cross pair is different. Its D_i is then exactly 1; the flips'
contribution to D is sum over flips of D_i / n, and the rest is D minus that.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations

import numpy as np

from snapaudit.stats.churn import PerQuestion
from snapaudit.stats.kernels import AnswerGrid, Kernel, pair_matrix


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
    mask = flip_mask(kernel, grid, old, new)
    return tuple(q for q, f in zip(grid.question_ids, mask.tolist(), strict=True) if f)


def state_blocks(kernel: Kernel, grid: AnswerGrid, states: tuple[str, ...]
                 ) -> tuple[np.ndarray, np.ndarray]:
    """The kernel matrix over ``states``' refs and the rows with an unlabelled pair (those
    are walked pair by pair, so that any error is the scalar walk's)."""
    k = pair_matrix(kernel, grid, states)
    incomplete: np.ndarray = np.asarray((k < 0).any(axis=(1, 2)))
    return k, incomplete


def stable_rows(k: np.ndarray, r: int, s: int) -> np.ndarray:
    """Per row: every pair of the repeats of the ``s``-th state of ``k`` is the same."""
    ju, lu = np.triu_indices(r, 1)
    out: np.ndarray = (k[:, s * r + ju, s * r + lu] == 1).all(axis=1)
    return out


def cross_rows(k: np.ndarray, r: int, sa: int, sb: int, same: bool) -> np.ndarray:
    """Per row: every cross pair of the ``sa``-th and ``sb``-th states is ``same``."""
    block = k[:, sa * r:(sa + 1) * r, sb * r:(sb + 1) * r]
    out: np.ndarray = np.asarray((block == int(same)).all(axis=(1, 2)))
    return out


def flip_mask(kernel: Kernel, grid: AnswerGrid, old: str, new: str) -> np.ndarray:
    """:func:`is_flip` of every question at once (bool, grid order)."""
    k, incomplete = state_blocks(kernel, grid, (old, new))
    r = grid.repeats
    mask: np.ndarray = (stable_rows(k, r, 0) & stable_rows(k, r, 1)
                        & cross_rows(k, r, 0, 1, same=False))
    for i in np.flatnonzero(incomplete).tolist():
        mask[i] = is_flip(kernel, grid, grid.question_ids[i], old, new)
    return mask


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
    d = pq.d.tolist()
    contribution = sum(d[i] for i, q in enumerate(pq.question_ids) if q in chosen)
    contribution_pp = 100 * contribution / grid.n
    return Flips(kernel.name, len(ids), ids, contribution_pp, 100 * pq.d_hat - contribution_pp)
