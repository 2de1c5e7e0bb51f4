"""The trajectory kernels: did two runs of an agent act alike, not only answer alike?

Each answer row may carry the steps the agent took (:mod:`snapaudit.tables.steps`). Three
kernels compare two trajectories of one question, with the estimand of the answer kernels
(:func:`snapaudit.stats.churn.per_question`: within over same-state repeat pairs, cross over
old x new pairs, D_i = w_i - c_i):

- ``tools``: 1 when both call the same sequence of tool names;
- ``queries``: 1 when their sequences of inputs are equal after the benchmark's answer
  normalization (the exact kernel's, :mod:`snapaudit.stats.normalize`);
- ``documents``: the Jaccard index of the sets of document ids over all steps (1 when both
  are empty); a graded kernel, so its D_i are off the exact bootstrap's grid (draws).

A row of the compared states without steps counts as an empty trajectory (the section says
how many there were). The diagnostics, :mod:`snapaudit.stats.trajectory_section`, split the
changed answers by whether the agent asked the same, and locate where trajectories diverge.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from snapaudit.stats.kernels import AnswerGrid
from snapaudit.stats.matrices import Matrices
from snapaudit.stats.normalize import Normalizer
from snapaudit.tables import AnswerRef, AnswerRow, AnswerTable
from snapaudit.tables.records import Step

KERNELS = ("tools", "queries", "documents")
Trajectory = tuple[Step, ...]
Cells = Mapping[tuple[str, str], Sequence[Trajectory]]  # (question, state) -> per repeat


@dataclass(frozen=True)
class Trajectories:
    """The steps of every (question, state) of the compared states, repeat by repeat, and
    how many of their rows carried none (read as empty)."""

    cells: Cells
    without_steps: int


def trajectories(rows: Sequence[AnswerRow], grid: AnswerGrid, states: Sequence[str]
                 ) -> Trajectories | None:
    """The trajectories of ``states`` when any row of the table carries steps, else None."""
    if (rows.steps is None if isinstance(rows, AnswerTable)
            else all(row.steps is None for row in rows)):
        return None
    keep = set(states)
    cells: dict[tuple[str, str], list[Trajectory]] = {
        (q, s): [()] * grid.repeats for q in grid.question_ids for s in states}
    missing = 0
    for qid, state, repeat, steps in row_cells(rows, "steps"):
        if state in keep:
            missing += steps is None
            cells[(qid, state)][repeat - 1] = steps or ()
    return Trajectories(cells, missing)


def row_cells(rows: Sequence[AnswerRow], column: Literal["steps", "turn_answers"]
              ) -> Iterator[tuple[str, str, int, Any]]:
    """(question, state, repeat, the row's ``column``) of every row (a column table's from
    its columns)."""
    values = getattr(rows, column, None) if isinstance(rows, AnswerTable) else None
    if not isinstance(rows, AnswerTable) or values is None:
        return ((r.question_id, r.state, r.repeat, getattr(r, column)) for r in rows)
    qids, states = rows.question_ids, rows.states
    return ((qids[q], states[s], j, t) for q, s, j, t in zip(
        rows.q.tolist(), rows.s.tolist(), rows.repeat.tolist(), values, strict=True))


class _TrajectoryKernel:
    """A kernel over trajectories: ``value`` of one pair, ``matrix`` of every pair of a grid
    (built by the subclass at once); ``same`` is the scalar view of a value of 1."""

    name = ""

    def __init__(self, cells: Cells) -> None:
        self.cells = cells
        self._matrices = Matrices()

    def steps(self, qid: str, ref: AnswerRef) -> Trajectory:
        return tuple(self.cells[(qid, ref.state)][ref.repeat - 1])

    def value(self, qid: str, a: AnswerRef, b: AnswerRef) -> float:
        raise NotImplementedError

    def same(self, qid: str, a: AnswerRef, b: AnswerRef) -> bool:
        return self.value(qid, a, b) == 1.0

    def matrix(self, grid: AnswerGrid, refs: Sequence[AnswerRef]) -> np.ndarray:
        """(n, m, m) of the kernel over ``refs`` (read-only, the last few remembered)."""
        return self._matrices.get(grid, refs, self._matrix)

    def _matrix(self, grid: AnswerGrid, refs: Sequence[AnswerRef]) -> np.ndarray:
        raise NotImplementedError


class SequenceKernel(_TrajectoryKernel):
    """1 when the two trajectories map to the same sequence under ``key`` (per step)."""

    def __init__(self, name: str, cells: Cells, key: Callable[[Step], Hashable]) -> None:
        super().__init__(cells)
        self.name, self._key = name, key

    def sequence(self, qid: str, ref: AnswerRef) -> tuple[Hashable, ...]:
        return tuple(self._key(s) for s in self.steps(qid, ref))

    def value(self, qid: str, a: AnswerRef, b: AnswerRef) -> float:
        return float(self.sequence(qid, a) == self.sequence(qid, b))

    def _matrix(self, grid: AnswerGrid, refs: Sequence[AnswerRef]) -> np.ndarray:
        codes: dict[tuple[Hashable, ...], int] = {}
        c = np.array([[codes.setdefault(self.sequence(q, ref), len(codes)) for ref in refs]
                      for q in grid.question_ids], dtype=np.int64).reshape(grid.n, len(refs))
        out: np.ndarray = (c[:, :, None] == c[:, None, :]).astype(np.int8)
        return out


class DocumentsKernel(_TrajectoryKernel):
    """The Jaccard index of the document-id sets over all steps (1 when both are empty)."""

    name = "documents"

    def documents(self, qid: str, ref: AnswerRef) -> frozenset[str]:
        return frozenset(d for s in self.steps(qid, ref) for d in s.doc_ids)

    def value(self, qid: str, a: AnswerRef, b: AnswerRef) -> float:
        return jaccard(self.documents(qid, a), self.documents(qid, b))

    def _matrix(self, grid: AnswerGrid, refs: Sequence[AnswerRef]) -> np.ndarray:
        m = len(refs)
        xs, ys = np.triu_indices(m, 1)
        values = np.empty((grid.n, len(xs)), dtype=np.float64)
        for i, q in enumerate(grid.question_ids):
            sets = [self.documents(q, ref) for ref in refs]  # each cell's set once
            values[i] = [jaccard(sets[x], sets[y]) for x, y in zip(xs, ys, strict=True)]
        out = np.ones((grid.n, m, m), dtype=np.float64)
        out[:, xs, ys] = out[:, ys, xs] = values
        return out


def jaccard(x: frozenset[str], y: frozenset[str]) -> float:
    """|x & y| / |x | y|, and 1 for two empty sets."""
    union = len(x | y)
    return len(x & y) / union if union else 1.0


def trajectory_kernels(found: Trajectories, normalize: Normalizer
                       ) -> dict[str, SequenceKernel | DocumentsKernel]:
    """The three kernels over ``found``, in :data:`KERNELS` order."""
    return {"tools": SequenceKernel("tools", found.cells, lambda s: s.tool),
            "queries": SequenceKernel("queries", found.cells, lambda s: normalize(s.input)),
            "documents": DocumentsKernel(found.cells)}
