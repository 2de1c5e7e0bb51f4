"""A read-only ``Sequence`` of records kept as columns, built one record at a time.

:class:`ColumnRows` gives the column tables (:class:`~snapaudit.tables.answertable.AnswerTable`,
:class:`~snapaudit.tables.labeltable.LabelTable`) their shared sequence behaviour: indexing by
integer or slice through ``_row(i)``, and equality with any sequence of the same records
(unhashable, like a list). Each table supplies ``__len__``, ``_row`` and a fast ``__iter__``.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Sequence
from typing import TypeVar, overload

R = TypeVar("R")


class ColumnRows(Sequence[R]):
    @abstractmethod
    def _row(self, i: int) -> R:
        """Record ``i`` (0 <= i < len), built from the columns."""

    @overload
    def __getitem__(self, index: int) -> R: ...

    @overload
    def __getitem__(self, index: slice) -> list[R]: ...

    def __getitem__(self, index: int | slice) -> R | list[R]:
        if isinstance(index, slice):
            return [self._row(i) for i in range(*index.indices(len(self)))]
        return self._row(range(len(self))[index])

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, str | bytes):
            return NotImplemented
        return len(self) == len(other) and all(x == y for x, y in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]
