"""Matched-repeat EM transitions: repeat j of the old state against repeat j of the new.

Categories (percent of the n x r matched comparisons): match->match, match->nonmatch,
nonmatch->match, nonmatch->same nonmatch, nonmatch->different nonmatch, where same/different
is decided by a kernel (semantic when labels are given; the exact-kernel variant is always
reported beside it). Labels are EM-match / EM-nonmatch, never correct / wrong.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from snapaudit.stats.kernels import AnswerGrid, Kernel
from snapaudit.stats.metrics import em_table
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
                kernel: Kernel, old: str, new: str) -> Transitions:
    em_old = em_table(grid, gold, normalize, old)
    em_new = em_table(grid, gold, normalize, new)
    counts = dict.fromkeys(CATEGORIES, 0)
    for i, qid in enumerate(grid.question_ids):
        for j in range(grid.repeats):
            a, b = em_old[i][j], em_new[i][j]
            if a:
                counts["match_to_match" if b else "match_to_nonmatch"] += 1
            elif b:
                counts["nonmatch_to_match"] += 1
            else:
                same = kernel.same(qid, AnswerRef(old, j + 1), AnswerRef(new, j + 1))
                counts["nonmatch_to_same_nonmatch" if same
                       else "nonmatch_to_different_nonmatch"] += 1
    return Transitions(kernel.name, grid.n * grid.repeats, counts)
