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

from snapaudit.stats.cluster import Resampling
from snapaudit.stats.kernels import AnswerGrid
from snapaudit.stats.metrics import check_gold, score_tables
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
                old: str, new: str) -> GoldScores:
    check_gold(grid, gold)

    def tables(state: str) -> tuple[np.ndarray, np.ndarray]:
        em, f1 = score_tables(grid, gold, normalize, state)
        shape = (grid.n, grid.repeats)
        return (np.array(em, dtype=np.float64).reshape(shape),
                np.array(f1, dtype=np.float64).reshape(shape))

    (em_old, f1_old), (em_new, f1_new) = tables(old), tables(new)
    return GoldScores(grid.question_ids, em_old, em_new, f1_old, f1_new)


@dataclass(frozen=True, slots=True)
class Delta:
    """A paired delta (pp): point, two-sided 95% interval and the share of draws <= 0."""

    point: float
    ci95: tuple[float, float]
    p_nonpositive: float

    def to_json(self) -> dict[str, object]:
        return {"point": self.point, "ci95": list(self.ci95), "p_nonpositive": self.p_nonpositive}


def paired_values(scores: GoldScores) -> np.ndarray:
    """The (n, 2) per-question deltas [EM, F1] as fractions."""
    return np.column_stack([scores.em_new.mean(axis=1) - scores.em_old.mean(axis=1),
                            scores.f1_new.mean(axis=1) - scores.f1_old.mean(axis=1)])


def utility_delta(scores: GoldScores, resampling: Resampling, draws: int, seed: int,
                  points: tuple[float, float] | None = None) -> dict[str, Delta]:
    """EM and F1 deltas (pp). ``points`` overrides the point estimates (the state means'
    difference of ``utility``, equal up to float summation order) so the two agree exactly."""
    boot = resampling.bootstrap(paired_values(scores), draws, seed)
    out = {}
    for col, name in enumerate(("em", "f1")):
        iv = boot.summary(col, scale=100.0)
        point = points[col] if points is not None else iv.point
        out[name] = Delta(point, iv.ci95, iv.p_nonpositive)
    return out
