"""Matched-repeat EM transitions: repeat j of the old state against repeat j of the new.

Categories (percent of the n x r matched comparisons): match->match, match->nonmatch,
nonmatch->match, nonmatch->same nonmatch, nonmatch->different nonmatch, where same/different
is decided by a kernel (semantic when labels are given; the exact-kernel variant is always
reported beside it). Labels are EM-match / EM-nonmatch, never correct / wrong.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from snapaudit.stats.kernels import AnswerGrid, Kernel, pair_matrix
from snapaudit.stats.matched import matched_table
from snapaudit.stats.metrics import GoldCells, score_grid
from snapaudit.stats.normalize import Normalizer
from snapaudit.tables import AnswerRef

CATEGORIES = ("match_to_match", "match_to_nonmatch", "nonmatch_to_match",
              "nonmatch_to_same_nonmatch", "nonmatch_to_different_nonmatch")


@dataclass(frozen=True)
class Transitions:
    kernel: str
    comparisons: int
    counts: Mapping[str, int]

    def percent(self) -> dict[str, float]:
        return {k: 100 * self.counts[k] / self.comparisons for k in CATEGORIES}

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = dict(self.percent())
        out["kernel"] = self.kernel
        out["comparisons"] = self.comparisons
        out["counts"] = dict(self.counts)
        return out


def transitions(grid: AnswerGrid, gold: Mapping[str, Sequence[str]], normalize: Normalizer,
                kernel: Kernel, old: str, new: str,
                cells: Mapping[str, GoldCells] | None = None) -> Transitions:
    """The matched-repeat categories (``cells``: :func:`score_grid` of old and new)."""
    if cells is None:
        cells = score_grid(grid, gold, normalize, (old, new))
    em_old, em_new = cells[old].em, cells[new].em
    r = grid.repeats
    k = pair_matrix(kernel, grid, (old, new))
    matched = k[:, np.arange(r), r + np.arange(r)]  # repeat j of old vs repeat j of new
    both_miss = ~em_old & ~em_new
    for i, j in zip(*np.nonzero(both_miss & (matched < 0)), strict=True):
        # the question-by-question walk would ask the kernel here: let it raise
        kernel.same(grid.question_ids[int(i)], AnswerRef(old, int(j) + 1),
                    AnswerRef(new, int(j) + 1))
        break
    mm, mn, nm, _ = (int(c) for c in matched_table(em_old, em_new).sum(axis=0))
    counts = {"match_to_match": mm, "match_to_nonmatch": mn, "nonmatch_to_match": nm,
              "nonmatch_to_same_nonmatch": int((both_miss & (matched == 1)).sum()),
              "nonmatch_to_different_nonmatch": int((both_miss & (matched == 0)).sum())}
    return Transitions(kernel.name, grid.n * grid.repeats, counts)
