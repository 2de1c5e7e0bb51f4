"""Answer rows held as columns: what the fast path of ``read_answers`` returns.

An :class:`AnswerTable` is a ``Sequence[AnswerRow]`` (equal to any sequence of the same rows)
that builds each :class:`AnswerRow` only when asked. The reader has already checked that its
rows are a full grid (every question x state x repeat 1..r, r >= 2, once) with no cluster
labels, so the analysis builds its grid from the columns without a pass over row objects.

A :class:`CellMap` is the grid's view of such columns: a ``Mapping`` (question, state) -> the
cell's r values over one flat list in (question, state, repeat) order (questions and states
in order of first appearance). At 10^5 questions a dict of one tuple per cell (answers and
doc ids) costs most of a second to build; a CellMap builds a cell's tuple only when asked,
iterates its keys in that order, equals any mapping with the same items, and is read by
columns (:meth:`CellMap.rows`, :meth:`CellMap.column`) without touching cells one by one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import product
from typing import TypeVar

import numpy as np

from snapaudit.tables.records import AnswerRow, Step
from snapaudit.tables.rowview import ColumnRows

T = TypeVar("T")


class AnswerTable(ColumnRows[AnswerRow]):
    """Rows in file order: ``q``/``s`` index ``question_ids``/``states`` (both in order of
    first appearance), ``repeat`` is 1-based; ``answers``, ``doc_ids``, ``questions`` (and
    ``steps`` and ``turn_answers``, when any row has them) are per row. ``cells`` orders the
    rows by (question, state, repeat)."""

    def __init__(self, question_ids: Sequence[str], states: Sequence[str], q: np.ndarray,
                 s: np.ndarray, repeat: np.ndarray, answers: Sequence[str],
                 doc_ids: Sequence[tuple[str, ...] | None], questions: Sequence[str | None],
                 answer_codes: tuple[list[str], np.ndarray] | None = None,
                 steps: Sequence[tuple[Step, ...] | None] | None = None,
                 turn_answers: Sequence[tuple[str, ...] | None] | None = None):
        self.question_ids = tuple(question_ids)
        self.states = tuple(states)
        self.q = np.asarray(q, dtype=np.int64)
        self.s = np.asarray(s, dtype=np.int64)
        self.repeat = np.asarray(repeat, dtype=np.int64)
        self.answers = list(answers)
        self._answer_codes = answer_codes
        self.doc_ids = list(doc_ids)
        self.questions = list(questions)
        # per row, when any row carries steps (an agent's trajectory); None: no row does
        self.steps = list(steps) if steps is not None else None
        # per row, when any row answers a conversation's turns; None: no row does
        self.turn_answers = list(turn_answers) if turn_answers is not None else None
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
                         self.questions[i], steps=self.steps[i] if self.steps else None,
                         turn_answers=self.turn_answers[i] if self.turn_answers else None)

    def __iter__(self) -> Iterator[AnswerRow]:
        qids, states = self.question_ids, self.states
        none = [None] * len(self.answers)
        steps = self.steps if self.steps is not None else none
        turns = self.turn_answers if self.turn_answers is not None else none
        for q, s, j, a, d, text, t, u in zip(self.q.tolist(), self.s.tolist(),
                                             self.repeat.tolist(), self.answers, self.doc_ids,
                                             self.questions, steps, turns, strict=True):
            yield AnswerRow(qids[q], states[s], j, a, d, text, steps=t, turn_answers=u)

    def __repr__(self) -> str:
        return (f"AnswerTable({len(self)} rows: {len(self.question_ids)} questions x "
                f"{len(self.states)} states x {self.repeats} repeats)")

    def in_cell_order(self, column: Sequence[T]) -> list[T]:
        """``column`` (one value per row) reordered by (question, state, repeat)."""
        if self._in_order:
            return list(column)
        return list(map(column.__getitem__, self.cells.tolist()))


class CellMap(Mapping[tuple[str, str], tuple[T, ...]]):
    """``flat`` holds every cell's ``repeats`` values, cells in (question, state) order."""

    def __init__(self, questions: Sequence[str], states: Sequence[str], repeats: int,
                 flat: list[T]) -> None:
        if len(flat) != len(questions) * len(states) * repeats:
            raise ValueError("the flat values are not one per question x state x repeat")
        self._questions, self._states = tuple(questions), tuple(states)
        self._q = {q: i for i, q in enumerate(self._questions)}
        self._s = {s: i for i, s in enumerate(self._states)}
        self.repeats = repeats
        self.flat = flat
        self._rows: tuple[tuple[str, ...], np.ndarray] | None = None

    def __getitem__(self, key: tuple[str, str]) -> tuple[T, ...]:
        start = self.row(key) * self.repeats
        return tuple(self.flat[start:start + self.repeats])

    def row(self, key: tuple[str, str]) -> int:
        """The cell's number in iteration order (KeyError when not a cell)."""
        try:
            q, s = key
            return self._q[q] * len(self._states) + self._s[s]
        except (TypeError, ValueError):
            raise KeyError(key) from None

    def __iter__(self) -> Iterator[tuple[str, str]]:
        return product(self._questions, self._states)

    def __len__(self) -> int:
        return len(self._questions) * len(self._states)

    def __repr__(self) -> str:
        return f"CellMap({len(self)} cells x {self.repeats} repeats)"

    def rows(self, question_ids: tuple[str, ...], states: Sequence[str]) -> np.ndarray:
        """(n, len(states)) numbers of the cells of ``question_ids`` x ``states``
        (KeyError when one is not a cell); the questions' rows are remembered for the last
        tuple."""
        if self._rows is None or self._rows[0] is not question_ids:
            q = self._q
            first = np.fromiter((q[x] for x in question_ids), np.int64, len(question_ids))
            self._rows = (question_ids, first * len(self._states))
        s = np.array([self._s[x] for x in states], dtype=np.int64)
        out: np.ndarray = self._rows[1][:, None] + s[None, :]
        return out

    def column(self, question_ids: tuple[str, ...], state: str, repeat: int) -> list[T]:
        """The value of repeat ``repeat`` (1-based) of ``state`` for each question, in order."""
        if not 1 <= repeat <= self.repeats:
            raise KeyError(repeat)
        at = self.rows(question_ids, [state])[:, 0] * self.repeats + (repeat - 1)
        return list(map(self.flat.__getitem__, at.tolist()))


def full_grid(rows: Sequence[AnswerRow]
               ) -> tuple[list[str], list[str], int, list[int]] | None:
    """(questions, states in first-seen order, r, row order by question, state, repeat) when
    ``rows`` are exactly every question x state x repeat 1..r (r >= 2) once; else None."""
    if not rows:
        return None
    qs: dict[str, int] = {}
    ss: dict[str, int] = {}
    n = len(rows)
    qi = np.fromiter((qs.setdefault(r.question_id, len(qs)) for r in rows), np.int64, n)
    si = np.fromiter((ss.setdefault(r.state, len(ss)) for r in rows), np.int64, n)
    rep = np.fromiter((r.repeat for r in rows), np.int64, n)
    r = int(rep.max())
    if r < 2 or int(rep.min()) < 1 or n != len(qs) * len(ss) * r:
        return None
    cell = (qi * len(ss) + si) * r + (rep - 1)
    order = np.empty(n, dtype=np.int64)
    order[cell] = np.arange(n)
    if not np.array_equal(np.sort(cell), np.arange(n)):
        return None
    return list(qs), list(ss), r, order.tolist()


def coded_full_grid(q: np.ndarray, s: np.ndarray, repeat: np.ndarray, questions: int,
                    states: int) -> bool:
    """Whether coded rows (question code, state code, repeat) are every question x state x
    repeat 1..max(repeat) exactly once: no duplicate, no hole (the fast readers' check)."""
    r = int(repeat.max())
    n = questions * states * r
    if len(repeat) != n or int(repeat.min()) < 1:
        return False
    cell = (q.astype(np.int64) * states + s) * r + (repeat - 1)
    return bool((np.bincount(cell, minlength=n) == 1).all())
