"""Per-question gold scores and the paired utility deltas (new - old) with intervals.

For question i and state s: EM_i(s) = share of the r repeats whose answer is an EM-match, and
F1_i(s) = mean token F1 over the repeats (``snapaudit.stats.metrics``). The paired delta of a
question is EM_i(new) - EM_i(old) (likewise F1); the reported delta is their mean in pp (the
same number as ``utility.em_delta``), with the 95% interval of the whole-question (or cluster)
bootstrap of the per-question deltas, both metrics resampled jointly, and ``p_nonpositive``,
the share of draws with delta <= 0. So "utility stayed flat" comes with an interval.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from snapaudit.stats.bootstrap import BootstrapDraws, Bootstrapped, Method
from snapaudit.stats.cluster import Resampling
from snapaudit.stats.exact import exact_intervals
from snapaudit.stats.kernels import AnswerGrid
from snapaudit.stats.metrics import GoldCells, check_gold, score_grid
from snapaudit.stats.normalize import Normalizer


@dataclass(frozen=True)
class GoldScores:
    """EM (0/1) and token F1 of every (question, repeat), questions in grid order: (n, r)."""

    question_ids: tuple[str, ...]
    em_old: np.ndarray
    em_new: np.ndarray
    f1_old: np.ndarray
    f1_new: np.ndarray


def gold_scores(grid: AnswerGrid, gold: Mapping[str, Sequence[str]], normalize: Normalizer,
                old: str, new: str, cells: Mapping[str, GoldCells] | None = None) -> GoldScores:
    """The (n, r) scores of ``old`` and ``new`` (``cells``: :func:`score_grid` of both)."""
    check_gold(grid, gold)
    if cells is None:
        cells = score_grid(grid, gold, normalize, (old, new))
    return GoldScores(grid.question_ids, cells[old].em.astype(np.float64),
                      cells[new].em.astype(np.float64), cells[old].f1, cells[new].f1)


@dataclass(frozen=True, slots=True)
class Delta:
    """A paired delta (pp): point, two-sided 95% interval and the share of draws <= 0."""

    point: float
    ci95: tuple[float, float]
    p_nonpositive: float
    method: str = "draws"  # of the interval: "exact" or "draws"

    def to_json(self) -> dict[str, object]:
        return {"point": self.point, "ci95": list(self.ci95), "p_nonpositive": self.p_nonpositive,
                "method": self.method}


def paired_values(scores: GoldScores) -> np.ndarray:
    """The (n, 2) per-question deltas [EM, F1] as fractions."""
    return np.column_stack([scores.em_new.mean(axis=1) - scores.em_old.mean(axis=1),
                            scores.f1_new.mean(axis=1) - scores.f1_old.mean(axis=1)])


def utility_delta(scores: GoldScores, resampling: Resampling, draws: int, seed: int,
                  points: tuple[float, float] | None = None,
                  boot: BootstrapDraws | None = None, *,
                  method: Method = "exact") -> dict[str, Delta]:
    """EM and F1 deltas (pp). ``points`` overrides the point estimates (the state means'
    difference of ``utility``, equal up to float summation order) so the two agree exactly;
    ``boot``: the joint draws of :func:`paired_values`, if already drawn. ``method`` "exact":
    the EM delta's exact bootstrap (per-question values on the grid of 1/r); the F1 delta is
    always drawn (jointly with EM, the stream as before)."""
    values = paired_values(scores)
    drawn = boot if boot is not None else resampling.bootstrap(values, draws, seed)
    intervals: Bootstrapped = drawn
    if method == "exact" and resampling.groups is None:
        intervals = exact_intervals(values, scores.em_old.shape[1], lambda: drawn, columns=(0,))
    out = {}
    for col, name in enumerate(("em", "f1")):
        iv = intervals.summary(col, scale=100.0)
        point = points[col] if points is not None else iv.point
        out[name] = Delta(point, iv.ci95, iv.p_nonpositive, iv.method)
    return out
