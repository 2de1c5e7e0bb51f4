"""``trajectory`` in results.json: the trajectory kernels and where the agent moved.

- ``kernels.<name>``: the trajectory kernels (:mod:`snapaudit.stats.trajectory`) as the answer
  kernels are reported (:class:`~snapaudit.stats.kernelstats.KernelStats`);
- ``changed_pairs``: the old x new pairs whose final answers differ under the exact kernel,
  split into ``same_queries`` (the agent asked the same; the index answered otherwise) and
  ``different_queries`` (the agent asked differently);
- ``first_divergence``: over old x new pairs (``cross``) and same-state repeat pairs
  (``within``), the step (1-based) where the two trajectories' actions (tool name and
  normalized input) first differ, a trajectory that ends first differing at its next step;
  ``identical`` counts pairs that never differ;
- ``rows_without_steps``: rows of the compared states that carried no steps (read as empty).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations, product
from typing import Any

import numpy as np

from snapaudit.stats.codec import decode
from snapaudit.stats.kernels import AnswerGrid, Kernel, pair_matrix
from snapaudit.stats.kernelstats import KernelStats
from snapaudit.stats.normalize import Normalizer
from snapaudit.stats.trajectory import KERNELS, Cells, Trajectory


@dataclass(frozen=True, slots=True)
class ChangedPairs:
    """Old x new pairs with different exact answers, by whether the queries were the same."""

    total: int
    same_queries: int
    different_queries: int

    def to_json(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class Divergence:
    """Pairs of trajectories by the first step where their actions differ."""

    pairs: int
    identical: int
    at_step: Mapping[int, int]

    def to_json(self) -> dict[str, Any]:
        return {"pairs": self.pairs, "identical": self.identical,
                "at_step": {str(k): v for k, v in sorted(self.at_step.items())}}


@dataclass(frozen=True)
class FirstDivergence:
    cross: Divergence
    within: Divergence

    def to_json(self) -> dict[str, Any]:
        return {"cross": self.cross.to_json(), "within": self.within.to_json()}


@dataclass(frozen=True)
class TrajectorySection:
    """``trajectory``: written only when the answers carry steps."""

    kernels: Mapping[str, KernelStats]
    changed_pairs: ChangedPairs
    first_divergence: FirstDivergence
    rows_without_steps: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"kernels": {k: v.to_json() for k, v in self.kernels.items()},
                "changed_pairs": self.changed_pairs.to_json(),
                "first_divergence": self.first_divergence.to_json(),
                "rows_without_steps": self.rows_without_steps}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> TrajectorySection:
        raw = data["kernels"]  # in KERNELS order (a document's keys are sorted)
        order = [k for k in KERNELS if k in raw] + sorted(set(raw) - set(KERNELS))
        kernels = {name: decode(KernelStats, raw[name], kernel=name) for name in order}
        return decode(cls, data, kernels=kernels)


def changed_pairs(grid: AnswerGrid, exact: Kernel, queries: Kernel, old: str, new: str
                  ) -> ChangedPairs:
    """:class:`ChangedPairs` over every question's r x r old x new pairs."""
    r = grid.repeats
    answers = pair_matrix(exact, grid, (old, new))[:, :r, r:]
    asked = pair_matrix(queries, grid, (old, new))[:, :r, r:]
    changed = answers == 0
    same = int(np.count_nonzero(changed & (asked == 1)))
    total = int(np.count_nonzero(changed))
    return ChangedPairs(total, same, total - same)


def first_divergence(grid: AnswerGrid, cells: Cells, normalize: Normalizer, old: str,
                     new: str) -> FirstDivergence:
    """:class:`FirstDivergence` of every question's cross and within pairs."""
    cross: list[int | None] = []
    within: list[int | None] = []
    for q in grid.question_ids:
        acts = {s: [_actions(t, normalize) for t in cells[(q, s)]] for s in (old, new)}
        cross += [_first(a, b) for a, b in product(acts[old], acts[new])]
        for s in (old, new):
            within += [_first(a, b) for a, b in combinations(acts[s], 2)]
    return FirstDivergence(_distribution(cross), _distribution(within))


def _actions(steps: Trajectory, normalize: Normalizer) -> tuple[tuple[str, str], ...]:
    return tuple((s.tool, normalize(s.input)) for s in steps)


def _first(a: Sequence[tuple[str, str]], b: Sequence[tuple[str, str]]) -> int | None:
    """The 1-based step where ``a`` and ``b`` first differ (None: identical)."""
    for j, (x, y) in enumerate(zip(a, b, strict=False), start=1):
        if x != y:
            return j
    return None if len(a) == len(b) else min(len(a), len(b)) + 1


def _distribution(steps: Sequence[int | None]) -> Divergence:
    at: dict[int, int] = {}
    for j in steps:
        if j is not None:
            at[j] = at.get(j, 0) + 1
    return Divergence(len(steps), sum(j is None for j in steps), dict(sorted(at.items())))
