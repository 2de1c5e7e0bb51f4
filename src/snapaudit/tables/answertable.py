"""Answer rows held as columns: what the fast path of ``read_answers`` returns.

An :class:`AnswerTable` is a ``Sequence[AnswerRow]`` (equal to any sequence of the same rows)
that builds each :class:`AnswerRow` only when asked. The reader has already checked that its
rows are a full grid (every question x state x repeat 1..r, r >= 2, once) with no cluster
labels, so the analysis builds its grid from the columns without a pass over row objects.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

import numpy as np

from snapaudit.tables.records import AnswerRow
from snapaudit.tables.rowview import ColumnRows

T = TypeVar("T")


class AnswerTable(ColumnRows[AnswerRow]):
    """Rows in file order: ``q``/``s`` index ``question_ids``/``states`` (both in order of
    first appearance), ``repeat`` is 1-based; ``answers``, ``doc_ids`` and ``questions`` are
    per row. ``cells`` orders the rows by (question, state, repeat)."""

    def __init__(self, question_ids: Sequence[str], states: Sequence[str], q: np.ndarray,
                 s: np.ndarray, repeat: np.ndarray, answers: Sequence[str],
                 doc_ids: Sequence[tuple[str, ...] | None], questions: Sequence[str | None],
                 answer_codes: tuple[list[str], np.ndarray] | None = None):
        self.question_ids = tuple(question_ids)
        self.states = tuple(states)
        self.q = np.asarray(q, dtype=np.int64)
        self.s = np.asarray(s, dtype=np.int64)
        self.repeat = np.asarray(repeat, dtype=np.int64)
        self.answers = list(answers)
        self._answer_codes = answer_codes
        self.doc_ids = list(doc_ids)
        self.questions = list(questions)
        self.repeats = int(self.repeat.max())
        cell = (self.q * len(self.states) + self.s) * self.repeats + (self.repeat - 1)
        self.cells = np.empty(len(cell), dtype=np.int64)
        self.cells[cell] = np.arange(len(cell))
        self._in_order = bool(np.array_equal(self.cells, np.arange(len(cell))))

    @property
    def answer_codes(self) -> tuple[list[str], np.ndarray]:
        """The distinct answers and each row's number among them."""
        if self._answer_codes is None:
            index: dict[str, int] = {}
            codes = [index.setdefault(a, len(index)) for a in self.answers]
            self._answer_codes = list(index), np.array(codes, dtype=np.int64)
        return self._answer_codes

    def __len__(self) -> int:
        return len(self.answers)

    def _row(self, i: int) -> AnswerRow:
        return AnswerRow(self.question_ids[self.q[i]], self.states[self.s[i]],
                         int(self.repeat[i]), self.answers[i], self.doc_ids[i],
                         self.questions[i])

    def __iter__(self) -> Iterator[AnswerRow]:
        qids, states = self.question_ids, self.states
        for q, s, j, a, d, text in zip(self.q.tolist(), self.s.tolist(), self.repeat.tolist(),
                                       self.answers, self.doc_ids, self.questions, strict=True):
            yield AnswerRow(qids[q], states[s], j, a, d, text)

    def __repr__(self) -> str:
        return (f"AnswerTable({len(self)} rows: {len(self.question_ids)} questions x "
                f"{len(self.states)} states x {self.repeats} repeats)")

    def in_cell_order(self, column: Sequence[T]) -> list[T]:
        """``column`` (one value per row) reordered by (question, state, repeat)."""
        if self._in_order:
            return list(column)
        return list(map(column.__getitem__, self.cells.tolist()))
