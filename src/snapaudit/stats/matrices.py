"""The last few pair matrices a kernel built, shared read-only by the diagnostics that ask
for the same (grid, refs) again (flips, ladder, transitions, permutation test, ...)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol, TypeVar

import numpy as np

from snapaudit.tables import AnswerRef


class _Grid(Protocol):
    @property
    def question_ids(self) -> tuple[str, ...]: ...


G = TypeVar("G", bound=_Grid)


class Matrices:
    """The last few (n, m, m) matrices a kernel built, by grid (its question ids, by
    identity) and refs; they are read-only, as every caller shares them."""

    def __init__(self, size: int = 4) -> None:
        self._size = size
        self._kept: list[tuple[tuple[str, ...], tuple[AnswerRef, ...], np.ndarray]] = []

    def get(self, grid: G, refs: Sequence[AnswerRef],
            build: Callable[[G, Sequence[AnswerRef]], np.ndarray]) -> np.ndarray:
        key = tuple(refs)
        for qids, kept_refs, out in self._kept:
            if qids is grid.question_ids and kept_refs == key:
                return out
        out = build(grid, key)
        out.flags.writeable = False
        self._kept = [(grid.question_ids, key, out), *self._kept[:self._size - 1]]
        return out
