"""Ladder analysis over ordered states (e.g. n0, n1, n3, n7).

For every adjacent step and the endpoints (old -> new): D and strict flips. For each
endpoint flip, each state strictly between old and new in the ladder is classified:
``aligns_old`` (every answer same as every old answer), ``aligns_new`` (likewise with new),
``disagrees`` (its own repeats differ), ``stable_third`` (stable, different from both),
``mixed`` (anything else). X->Y->X returns: a strict flip on two consecutive steps whose
outer states agree on every cross pair. First-state alignment: for endpoint flips, whether
the ladder's first state is repeat-stable and agrees with old, with new, or neither.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from snapaudit.stats.churn import per_question
from snapaudit.stats.codec import decode
from snapaudit.stats.flips import (
    all_cross,
    cross_rows,
    flip_ids,
    flip_mask,
    stable,
    stable_rows,
    state_blocks,
)
from snapaudit.stats.kernels import AnswerGrid, Kernel

CLASSES = ("aligns_old", "aligns_new", "stable_third", "disagrees", "mixed")
FIRST = ("aligns_old", "aligns_new", "stable_other", "unstable")


@dataclass(frozen=True, slots=True)
class Step:
    old: str
    new: str
    d_hat: float
    flips: int
    flip_ids: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {"old": self.old, "new": self.new, "d_hat": self.d_hat, "flips": self.flips,
                "question_ids": list(self.flip_ids)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Step:
        return decode(cls, data, flip_ids=tuple(data["question_ids"]))


@dataclass(frozen=True)
class Ladder:
    kernel: str
    states: tuple[str, ...]
    steps: tuple[Step, ...]
    endpoints: Step
    middle: Mapping[str, Mapping[str, int]]
    returns: Mapping[str, tuple[str, ...]]
    first_state: Mapping[str, int] | None

    def to_json(self) -> dict[str, object]:
        return {"kernel": self.kernel, "states": list(self.states),
                "steps": [s.to_json() for s in self.steps],
                "endpoints": self.endpoints.to_json(),
                "middle": {m: dict(c) for m, c in self.middle.items()},
                "returns": {k: list(v) for k, v in self.returns.items()},
                "first_state": dict(self.first_state) if self.first_state is not None else None}


def _step(kernel: Kernel, grid: AnswerGrid, old: str, new: str) -> Step:
    ids = flip_ids(kernel, grid, old, new)
    return Step(old, new, 100 * per_question(grid, kernel, old, new).d_hat, len(ids), ids)


def classify_middle(kernel: Kernel, grid: AnswerGrid, qid: str, old: str, mid: str,
                    new: str) -> str:
    if all_cross(kernel, grid, qid, mid, old, same=True):
        return "aligns_old"
    if all_cross(kernel, grid, qid, mid, new, same=True):
        return "aligns_new"
    if not stable(kernel, grid, qid, mid):
        return "disagrees"
    if (all_cross(kernel, grid, qid, mid, old, same=False)
            and all_cross(kernel, grid, qid, mid, new, same=False)):
        return "stable_third"
    return "mixed"


def classify_first(kernel: Kernel, grid: AnswerGrid, qid: str, first: str, old: str,
                   new: str) -> str:
    if not stable(kernel, grid, qid, first):
        return "unstable"
    if all_cross(kernel, grid, qid, first, old, same=True):
        return "aligns_old"
    if all_cross(kernel, grid, qid, first, new, same=True):
        return "aligns_new"
    return "stable_other"


def ladder(kernel: Kernel, grid: AnswerGrid, states: Sequence[str], old: str,
           new: str) -> Ladder:
    grid.require_states(states)
    states = tuple(states)
    steps = tuple(_step(kernel, grid, a, b) for a, b in pairwise(states))
    end = _step(kernel, grid, old, new)
    lo, hi = sorted((states.index(old), states.index(new)))
    sub = grid.subset(end.flip_ids)
    middle = {m: _count(_classes(kernel, sub, m, old, new, classify_middle, _middle_rows),
                        CLASSES) for m in states[lo + 1:hi]}
    first = states[0]
    first_state = None
    if first not in (old, new):
        first_state = _count(_classes(kernel, sub, first, old, new, classify_first, _first_rows),
                             FIRST)
    flips = {(a, b): flip_mask(kernel, grid, a, b) for a, b in pairwise(states)}
    returns = {}
    for a, b, c in zip(states, states[1:], states[2:], strict=False):
        both = grid.subset([grid.question_ids[i] for i in
                            np.flatnonzero(flips[(a, b)] & flips[(b, c)]).tolist()])
        k, incomplete = state_blocks(kernel, both, (a, c))
        back = cross_rows(k, both.repeats, 0, 1, same=True).tolist()
        for i in np.flatnonzero(incomplete).tolist():
            back[i] = all_cross(kernel, both, both.question_ids[i], a, c, same=True)
        returns[f"{a}->{b}->{c}"] = tuple(q for q, x in zip(both.question_ids, back, strict=True)
                                          if x)
    return Ladder(kernel.name, states, steps, end, middle, returns, first_state)


def _middle_rows(k: np.ndarray, r: int) -> np.ndarray:
    """classify_middle on complete rows of the (mid, old, new) matrix."""
    cls = np.full(k.shape[0], "mixed", dtype=object)
    stable_third = (stable_rows(k, r, 0) & cross_rows(k, r, 0, 1, same=False)
                    & cross_rows(k, r, 0, 2, same=False))
    cls[stable_third] = "stable_third"
    cls[~stable_rows(k, r, 0)] = "disagrees"
    cls[cross_rows(k, r, 0, 2, same=True)] = "aligns_new"
    cls[cross_rows(k, r, 0, 1, same=True)] = "aligns_old"
    return cls


def _first_rows(k: np.ndarray, r: int) -> np.ndarray:
    """classify_first on complete rows of the (first, old, new) matrix."""
    cls = np.full(k.shape[0], "stable_other", dtype=object)
    cls[cross_rows(k, r, 0, 2, same=True)] = "aligns_new"
    cls[cross_rows(k, r, 0, 1, same=True)] = "aligns_old"
    cls[~stable_rows(k, r, 0)] = "unstable"
    return cls


def _classes(kernel: Kernel, sub: AnswerGrid, x: str, old: str, new: str,
             scalar: Callable[..., str], rows: Callable[[np.ndarray, int], np.ndarray]
             ) -> list[str]:
    """The class of every question of ``sub`` (the endpoint flips), in order."""
    if sub.n == 0:
        return []
    k, incomplete = state_blocks(kernel, sub, (x, old, new))
    out: list[str] = rows(k, sub.repeats).tolist()
    for i in np.flatnonzero(incomplete).tolist():
        q = sub.question_ids[i]
        out[i] = (scalar(kernel, sub, q, old, x, new) if scalar is classify_middle
                  else scalar(kernel, sub, q, x, old, new))
    return out


def _count(values: Sequence[str], keys: Sequence[str]) -> dict[str, int]:
    return {k: sum(1 for v in values if v == k) for k in keys}
