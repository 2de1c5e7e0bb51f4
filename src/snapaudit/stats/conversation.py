"""``conversation`` in results.json: excess churn D turn by turn of conversations.

A question asked as a conversation (a cohort question with ``turns``) has one answer per user
turn in every row (``turn_answers``, :mod:`snapaudit.tables.turns`); its final answer (the
last) is the row's ``answer``, so every other statistic of the analysis is of the final turn.
Here, for each turn j (1-based), the exact kernel's within, cross and D with the estimand of
the answer kernels (:func:`snapaudit.stats.churn.per_question`, the same code) over the
questions that have a turn j, and its whole-question bootstrap (exact on the r-repeat grid,
:meth:`~snapaudit.stats.cluster.Resampling.intervals`); ``final`` is the same over every
conversation's last turn (the numbers of turn T when all conversations have T turns).
Written only when some row of the compared states carries turn answers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from snapaudit.errors import InputError
from snapaudit.stats.churn import per_question
from snapaudit.stats.cluster import Resampling
from snapaudit.stats.codec import decode
from snapaudit.stats.config import AnalysisConfig
from snapaudit.stats.kernels import AnswerGrid, ExactKernel
from snapaudit.stats.kernelstats import KernelStats, kernel_stats
from snapaudit.stats.normalize import Normalizer
from snapaudit.stats.trajectory import row_cells
from snapaudit.stats.upper import intervals
from snapaudit.tables import AnswerRow, AnswerTable
from snapaudit.tables.answertable import CellMap

Cells = Mapping[tuple[str, str], Sequence[tuple[str, ...]]]  # (question, state) -> per repeat


@dataclass(frozen=True)
class TurnStats:
    """The exact kernel on one turn's answers: ``turn`` (1-based; None for ``final`` when
    conversations differ in length) over ``questions`` questions."""

    turn: int | None
    questions: int
    exact: KernelStats

    def to_json(self) -> dict[str, object]:
        return {"turn": self.turn, "questions": self.questions, **self.exact.to_json()}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> TurnStats:
        return decode(cls, data, exact=decode(KernelStats, data, kernel="exact"))


@dataclass(frozen=True)
class ConversationSection:
    """``conversation``: ``turns`` (turn 1, 2, ...), ``final``, and how many questions were
    conversations and how many single-turn."""

    turns: tuple[TurnStats, ...]
    final: TurnStats
    conversations: int
    single_turn: int

    def to_json(self) -> dict[str, object]:
        return {"turns": [t.to_json() for t in self.turns], "final": self.final.to_json(),
                "conversations": self.conversations, "single_turn": self.single_turn}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> ConversationSection:
        return decode(cls, data)


def conversation(rows: Sequence[AnswerRow], grid: AnswerGrid, normalize: Normalizer,
                 config: AnalysisConfig, res: Resampling) -> ConversationSection | None:
    """The section when a row of the compared states carries turn answers, else None."""
    old, new = config.old, config.new
    cells = _turn_cells(rows, grid, (old, new))
    if cells is None:
        return None
    counts = _turn_counts(cells, grid, (old, new))

    def stats(turn: int | None, keep: np.ndarray, pick: int) -> TurnStats:
        qids = [q for q, k in zip(grid.question_ids, keep.tolist(), strict=True) if k]
        flat = [t[pick] for q in qids for s in (old, new) for t in cells[(q, s)]]
        states = [old, new]  # the cells' order; the grid's states sorted, as AnswerGrid's
        sub = AnswerGrid(tuple(qids), tuple(sorted(states)), grid.repeats,
                         CellMap(qids, states, grid.repeats, flat),
                         CellMap(qids, states, grid.repeats, [None] * len(flat)))
        pq = per_question(sub, ExactKernel(sub, normalize), old, new)
        (iv,) = intervals(pq.d[:, None], res.subset(keep), config.draws, config.seed,
                          method=config.bootstrap, repeats=grid.repeats)
        return TurnStats(turn, len(qids), kernel_stats("exact", pq, iv))

    turns = tuple(stats(j, counts >= j, j - 1) for j in range(1, int(counts.max()) + 1))
    lengths = set(counts[counts > 0].tolist())
    final = turns[-1] if len(lengths) == 1 else stats(None, counts > 0, -1)
    conv = int(np.count_nonzero(counts))
    return ConversationSection(turns, final, conv, grid.n - conv)


def _turn_cells(rows: Sequence[AnswerRow], grid: AnswerGrid, states: Sequence[str]
                ) -> dict[tuple[str, str], list[tuple[str, ...]]] | None:
    """Each (question, state) of ``states``'s turn answers per repeat (() for a row without),
    or None when no row of ``states`` carries any."""
    if isinstance(rows, AnswerTable) and rows.turn_answers is None:
        return None
    keep = set(states)
    cells: dict[tuple[str, str], list[tuple[str, ...]]] = {
        (q, s): [()] * grid.repeats for q in grid.question_ids for s in states}
    found = False
    for qid, state, repeat, turns in row_cells(rows, "turn_answers"):
        if state in keep and turns is not None:
            cells[(qid, state)][repeat - 1] = turns
            found = True
    return cells if found else None


def _turn_counts(cells: Cells, grid: AnswerGrid, states: Sequence[str]) -> np.ndarray:
    """Each question's number of turns (0: single-turn); an InputError when its rows differ."""
    out = np.zeros(grid.n, dtype=np.int64)
    for i, q in enumerate(grid.question_ids):
        lengths = {len(t) for s in states for t in cells[(q, s)]}
        if len(lengths) > 1:
            shown = " and ".join(map(str, sorted(lengths)))
            raise InputError(f"question {q!r}: its answer rows carry turn answers for {shown} "
                             "turns (0: none); every row of a conversation answers each of "
                             "its turns")
        out[i] = lengths.pop()
    return out
