"""The answer grid and the two kernels: normalized exact match and semantic pair labels.

A kernel answers one question: are answers ``a`` and ``b`` of question ``q`` the same?
The exact kernel compares benchmark-normalized strings. The semantic kernel looks up one
judge's pair labels (order of the pair does not matter) and keeps non-transitive labels as
they are; :func:`nontransitive_triangles` counts them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from itertools import combinations
from typing import Protocol

import numpy as np

from snapaudit.errors import InputError
from snapaudit.stats.matrices import Matrices
from snapaudit.stats.normalize import Normalizer
from snapaudit.tables import (
    AnswerRef,
    AnswerRow,
    AnswerTable,
    LabelTable,
    PairLabel,
    validate_answers,
)
from snapaudit.tables.answertable import CellMap, full_grid


@dataclass(frozen=True)
class AnswerGrid:
    """A validated full grid: every question x state x repeat 1..r holds one answer.

    Questions are in sorted id order (the documented order of every per-question array).
    """

    question_ids: tuple[str, ...]
    states: tuple[str, ...]
    repeats: int
    answers: Mapping[tuple[str, str], tuple[str, ...]]
    doc_ids: Mapping[tuple[str, str], tuple[tuple[str, ...] | None, ...]]
    # the distinct answers and each cell's number among them (see ``distinct``), when known
    answer_codes: tuple[list[str], np.ndarray] | None = field(default=None, compare=False,
                                                             repr=False)
    # the content hashes beside each cell's doc ids, when some row carries them
    doc_hashes: Mapping[tuple[str, str], tuple[tuple[str, ...] | None, ...]] | None = field(
        default=None, compare=False, repr=False)

    @classmethod
    def from_rows(cls, rows: Sequence[AnswerRow], *, path: str | None = None) -> AnswerGrid:
        if isinstance(rows, AnswerTable):  # the reader checked the full grid on columns
            values, codes = rows.answer_codes
            return cls._from_cells(list(rows.question_ids), list(rows.states), rows.repeats,
                                   rows.in_cell_order(rows.answers),
                                   rows.in_cell_order(rows.doc_ids),
                                   (values, codes[rows.cells].reshape(-1, rows.repeats)))
        cells = full_grid(rows)
        if cells is None:  # not a clean full grid: the row-by-row check names the problem
            validate_answers(rows, path=path)
            raise AssertionError("validate_answers passed a grid the column check refused")
        qids, states, repeats, order = cells
        hashes = ([rows[i].doc_hashes for i in order]
                  if any(r.doc_hashes is not None for r in rows) else None)
        return cls._from_cells(qids, states, repeats, [rows[i].answer for i in order],
                               [rows[i].doc_ids for i in order], hashes_flat=hashes)

    @classmethod
    def _from_cells(cls, qids: list[str], states: list[str], repeats: int,
                    answers_flat: list[str], docs_flat: list[tuple[str, ...] | None],
                    answer_codes: tuple[list[str], np.ndarray] | None = None, *,
                    hashes_flat: list[tuple[str, ...] | None] | None = None) -> AnswerGrid:
        """The grid of every (question, state, repeat) in that order (first appearance)."""
        answers = CellMap(qids, states, repeats, answers_flat)
        docs = CellMap(qids, states, repeats, docs_flat)
        hashes = None if hashes_flat is None else CellMap(qids, states, repeats, hashes_flat)
        return cls(tuple(sorted(qids)), tuple(sorted(states)), repeats, answers, docs,
                   answer_codes, hashes)

    def subset(self, question_ids: Sequence[str]) -> AnswerGrid:
        """The same grid restricted to ``question_ids`` (kept in sorted order)."""
        keep = set(question_ids)
        return AnswerGrid(tuple(q for q in self.question_ids if q in keep), self.states,
                          self.repeats, self.answers, self.doc_ids, self.answer_codes,
                          self.doc_hashes)

    @property
    def n(self) -> int:
        return len(self.question_ids)

    @cached_property
    def distinct(self) -> tuple[list[str], np.ndarray]:
        """The distinct answers, and the number of each cell's answer among them: one row per
        key of :attr:`answers` (in its order), one column per repeat."""
        if self.answer_codes is not None:
            return self.answer_codes
        raw: dict[str, int] = {}
        cells = self.answers
        values = cells.flat if isinstance(cells, CellMap) else (
            a for vals in cells.values() for a in vals)
        flat = [raw.setdefault(a, len(raw)) for a in values]
        return list(raw), np.array(flat, dtype=np.int64).reshape(-1, self.repeats)

    @cached_property
    def key_rows(self) -> dict[tuple[str, str], int]:
        """Row of every (question, state) key in :attr:`distinct`."""
        return {key: i for i, key in enumerate(self.answers)}

    def cell_rows(self, states: Sequence[str]) -> np.ndarray:
        """(n, len(states)) rows in :attr:`distinct` of each question's states."""
        if isinstance(self.answers, CellMap):  # by arithmetic on the cells' order
            return self.answers.rows(self.question_ids, states)
        rows = self.key_rows
        flat = [rows[(q, s)] for q in self.question_ids for s in states]
        return np.array(flat, dtype=np.int64).reshape(self.n, len(states))

    @cached_property
    def index(self) -> dict[str, int]:
        """Row of every question id in the per-question arrays."""
        return {q: i for i, q in enumerate(self.question_ids)}

    def rows_of(self, question_ids: tuple[str, ...]) -> np.ndarray:
        """The row of each id (-1 when not in the grid); remembered for the last tuple."""
        cached = self.__dict__.get("_rows_of")
        if cached is not None and cached[0] is question_ids:
            rows: np.ndarray = cached[1]
            return rows
        get = self.index.get
        rows = np.fromiter((get(q, -1) for q in question_ids), np.int64, len(question_ids))
        self.__dict__["_rows_of"] = (question_ids, rows)
        return rows

    def require_states(self, states: Sequence[str]) -> None:
        unknown = [s for s in states if s not in self.states]
        if unknown:
            raise InputError(f"unknown state(s) {', '.join(unknown)}; the answers hold "
                             f"{', '.join(self.states)}")

    def refs(self, state: str) -> list[AnswerRef]:
        return [AnswerRef(state, j) for j in range(1, self.repeats + 1)]

    def answer(self, qid: str, ref: AnswerRef) -> str:
        return self.answers[(qid, ref.state)][ref.repeat - 1]


class Kernel(Protocol):
    name: str

    def same(self, qid: str, a: AnswerRef, b: AnswerRef) -> bool:
        """Whether answers ``a`` and ``b`` of question ``qid`` are the same."""


class ExactKernel:
    """1 when the benchmark-normalized strings are equal."""

    name = "exact"

    def __init__(self, grid: AnswerGrid, normalize: Normalizer):
        self._answers, self._normalize = grid.answers, normalize
        values, cells = grid.distinct  # each distinct answer is normalized once
        codes: dict[str, int] = {}
        of_raw = np.array([codes.setdefault(normalize(a), len(codes)) for a in values],
                          dtype=np.int64)
        self._codes = of_raw[cells]
        self._matrices = Matrices()
        self._cache: dict[tuple[tuple[str, ...], str], tuple[tuple[str, ...], np.ndarray]] = {}

    def normalized(self, qid: str, ref: AnswerRef) -> str:
        return self._normalize(self._answers[(qid, ref.state)][ref.repeat - 1])

    def same(self, qid: str, a: AnswerRef, b: AnswerRef) -> bool:
        return self.normalized(qid, a) == self.normalized(qid, b)

    def codes(self, grid: AnswerGrid, refs: Sequence[AnswerRef]) -> np.ndarray:
        """(n, m) codes of the normalized answers: equal codes, equal strings."""
        states = list(dict.fromkeys(ref.state for ref in refs))
        per_state = {s: self._state_codes(grid, s) for s in states}
        return np.stack([per_state[ref.state][:, ref.repeat - 1] for ref in refs], axis=1)

    def _state_codes(self, grid: AnswerGrid, state: str) -> np.ndarray:
        key = (grid.question_ids, state)
        hit = self._cache.get(key)
        if hit is None or hit[0] is not grid.question_ids:
            hit = (grid.question_ids, self._codes[grid.cell_rows([state])[:, 0]])
            self._cache = {key: hit, **{k: v for k, v in list(self._cache.items())[-3:]}}
        return hit[1]

    def matrix(self, grid: AnswerGrid, refs: Sequence[AnswerRef]) -> np.ndarray:
        """(n, m, m) int8: 1 where the refs' normalized answers are equal, else 0
        (read-only: the last few are remembered and shared)."""
        return self._matrices.get(grid, refs, self._matrix)

    def _matrix(self, grid: AnswerGrid, refs: Sequence[AnswerRef]) -> np.ndarray:
        c = self.codes(grid, refs)
        out: np.ndarray = (c[:, :, None] == c[:, None, :]).astype(np.int8)
        return out


class SemanticKernel:
    """One judge's pair labels; a pair the kernel needs but the judge did not label is an error."""

    name = "semantic"

    def __init__(self, labels: Sequence[PairLabel], judge: str):
        self.judge = judge
        self.table = LabelTable.from_labels(labels)
        self._rows = np.flatnonzero(self.table.for_judge(judge))
        self._dict: dict[tuple[str, AnswerRef, AnswerRef], bool] | None = None
        self._matrices = Matrices()
        self._pairs: np.ndarray | None = None

    def pair_codes(self) -> np.ndarray:
        """Each of the judge's rows' ref pair as ``a x len(refs) + b`` (built once)."""
        if self._pairs is None:
            t, rows = self.table, self._rows
            wide = np.int32 if len(t.refs) ** 2 < 2 ** 31 else np.int64
            self._pairs = t.a[rows].astype(wide) * len(t.refs) + t.b[rows].astype(wide)
        return self._pairs

    @property
    def _same(self) -> dict[tuple[str, AnswerRef, AnswerRef], bool]:
        if self._dict is None:  # the scalar view, built on first use (row by row)
            t, out = self.table, {}
            for i in self._rows.tolist():
                lo, hi = sorted((t.refs[t.a[i]], t.refs[t.b[i]]))
                out[(t.questions[t.q[i]], lo, hi)] = bool(t.same[i])
            self._dict = out
        return self._dict

    @property
    def judge_rows(self) -> np.ndarray:
        """Rows of :attr:`table` holding this judge's labels."""
        return self._rows

    def matrix(self, grid: AnswerGrid, refs: Sequence[AnswerRef]) -> np.ndarray:
        """(n, m, m) int8 of this judge's labels over ``refs``: 1 same, 0 different,
        -1 unlabelled; the diagonal is 1 (read-only: the last few are remembered)."""
        return self._matrices.get(grid, refs, self._matrix)

    def _matrix(self, grid: AnswerGrid, refs: Sequence[AnswerRef]) -> np.ndarray:
        t, m = self.table, len(refs)
        out = np.full((grid.n, m, m), -1, dtype=np.int8)
        pos = {ref: i for i, ref in enumerate(refs)}
        index = np.dtype(np.int32 if out.size < 2 ** 31 else np.int64)  # flat offsets: int32
        # where they fit (half the memory of the per-label temporaries)
        qrow = grid.rows_of(t.questions).astype(index)
        rpos = np.array([pos.get(ref, -1) for ref in t.refs], dtype=index)
        rows = self._rows
        if len(rows) and len(qrow) and len(rpos):
            # the offset in an m x m block of each (a, b) ref pair, -1 outside ``refs``
            inside = (rpos[:, None] >= 0) & (rpos[None, :] >= 0)
            ab = np.where(inside, rpos[:, None] * m + rpos[None, :], -1).ravel().astype(index)
            ba = np.where(inside, rpos[None, :] * m + rpos[:, None], -1).ravel().astype(index)
            pairs = self.pair_codes()
            keep = ab[pairs] >= 0  # only the rows of pairs within refs are gathered
            if not keep.all():
                rows, pairs = rows[keep], pairs[keep]
            qi, value = qrow[t.q[rows]], t.same[rows].view(np.int8)
            known = qi >= 0
            if not known.all():
                qi, pairs, value = qi[known], pairs[known], value[known]
            # out[qi, pa, pb] = value, then out[qi, pb, pa] = value (a later label of the
            # same cell wins, as in the 3-index assignment), on flat indices
            flat, base = out.reshape(-1), qi * (m * m)
            flat[base + ab[pairs]] = value
            flat[base + ba[pairs]] = value
        diag = np.arange(m)
        out[:, diag, diag] = 1
        return out

    def same(self, qid: str, a: AnswerRef, b: AnswerRef) -> bool:
        if a == b:
            return True
        lo, hi = sorted((a, b))
        try:
            return self._same[(qid, lo, hi)]
        except KeyError:
            raise InputError(
                f"missing pair label (judge {self.judge!r}) for question {qid!r}: "
                f"{lo.state}/{lo.repeat} vs {hi.state}/{hi.repeat}; the semantic kernel needs "
                "every within-state and cross-state pair of the compared states") from None

    def labelled(self) -> Mapping[tuple[str, AnswerRef, AnswerRef], bool]:
        return self._same


def pair_matrix(kernel: Kernel, grid: AnswerGrid, states: Sequence[str]) -> np.ndarray:
    """(n, m, m) int8 of k over the refs of ``states`` (m = len(states) x r), -1 where a
    pair has no value; kernels without a ``matrix`` method are asked pair by pair."""
    refs = [ref for s in states for ref in grid.refs(s)]
    matrix = getattr(kernel, "matrix", None)
    if matrix is not None:
        out: np.ndarray = matrix(grid, refs)
        return out
    m = len(refs)
    out = np.empty((grid.n, m, m), dtype=np.int8)
    for i, q in enumerate(grid.question_ids):
        out[i] = [[kernel.same(q, x, y) for y in refs] for x in refs]
    return out


def nontransitive_counts(kernel: Kernel, grid: AnswerGrid, states: Sequence[str]) -> np.ndarray:
    """Per question, :func:`nontransitive_triangles` over the refs of ``states``."""
    k = pair_matrix(kernel, grid, states)  # int8: a triple's sum lies in [-3, 3]
    n, m = k.shape[0], k.shape[1]
    incomplete = np.flatnonzero((k < 0).any(axis=(1, 2)))
    for i in incomplete[:1]:  # raises the missing-label error the scalar walk would raise
        nontransitive_triangles(kernel, grid, grid.question_ids[int(i)], states)
    x, y, z = np.array(list(combinations(range(m), 3)), dtype=np.int64).reshape(-1, 3).T
    xy, yz, xz = x * m + y, y * m + z, x * m + z  # every triple at once, on flat pairs
    flat = k.reshape(n, m * m)
    count = np.zeros(n, dtype=np.int64)
    step = max(1, (1 << 22) // max(1, x.size))  # rows per block: bounded memory
    for start in range(0, n if x.size else 0, step):
        rows = flat[start:start + step]
        count[start:start + step] = np.count_nonzero(
            (rows[:, xy] + rows[:, yz] + rows[:, xz]) == 2, axis=1)
    return count


def block(kernel: Kernel, grid: AnswerGrid, qid: str, sa: str, sb: str) -> np.ndarray:
    """The r x r matrix k(a_j, b_l) for states ``sa`` and ``sb`` of one question."""
    ra, rb = grid.refs(sa), grid.refs(sb)
    return np.array([[kernel.same(qid, x, y) for y in rb] for x in ra], dtype=np.float64)


def within_mean(kernel: Kernel, grid: AnswerGrid, qid: str, state: str) -> float:
    """Mean of k over unordered pairs j < l of one state's repeats."""
    refs = grid.refs(state)
    pairs = list(combinations(refs, 2))
    return sum(kernel.same(qid, x, y) for x, y in pairs) / len(pairs)


def nontransitive_triangles(kernel: Kernel, grid: AnswerGrid, qid: str,
                            states: Sequence[str]) -> int:
    """Triples of answers with exactly two 'same' pairs (x~y, y~z, but x !~ z)."""
    refs = [ref for s in states for ref in grid.refs(s)]
    count = 0
    for x, y, z in combinations(refs, 3):
        if kernel.same(qid, x, y) + kernel.same(qid, y, z) + kernel.same(qid, x, z) == 2:
            count += 1
    return count
