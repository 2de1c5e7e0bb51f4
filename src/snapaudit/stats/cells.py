"""The answer grid's cells as one flat list: a ``Mapping`` (question, state) -> r values.

At 10^5 questions a dict of one tuple per cell (two of them: answers and doc ids) costs most
of a second to build; a :class:`CellMap` keeps the values in (question, state, repeat) order
(questions and states in order of first appearance) and builds a cell's tuple only when it is
asked for. It iterates its keys in that order, as the dict did, and equals any mapping with
the same items. The analysis reads it by columns (:meth:`CellMap.rows`, :meth:`CellMap.column`)
without touching cells one by one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from itertools import product
from typing import TypeVar

import numpy as np

T = TypeVar("T")


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
