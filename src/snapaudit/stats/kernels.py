"""The answer grid and the two kernels: normalized exact match and semantic pair labels.

A kernel answers one question: are answers ``a`` and ``b`` of question ``q`` the same?
The exact kernel compares benchmark-normalized strings. The semantic kernel looks up one
judge's pair labels (order of the pair does not matter) and keeps non-transitive labels as
they are; :func:`nontransitive_triangles` counts them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Protocol

import numpy as np

from snapaudit.errors import InputError
from snapaudit.stats.normalize import Normalizer
from snapaudit.tables import AnswerRef, AnswerRow, PairLabel, validate_answers


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

    @classmethod
    def from_rows(cls, rows: Sequence[AnswerRow], *, path: str | None = None) -> AnswerGrid:
        validate_answers(rows, path=path)
        repeats = max(row.repeat for row in rows)
        cells: dict[tuple[str, str], list[AnswerRow | None]] = {}
        for row in rows:
            cells.setdefault((row.question_id, row.state), [None] * repeats)[row.repeat - 1] = row
        answers = {k: tuple(r.answer for r in v if r is not None) for k, v in cells.items()}
        docs = {k: tuple(r.doc_ids for r in v if r is not None) for k, v in cells.items()}
        return cls(tuple(sorted({r.question_id for r in rows})),
                   tuple(sorted({r.state for r in rows})), repeats, answers, docs)

    def subset(self, question_ids: Sequence[str]) -> AnswerGrid:
        """The same grid restricted to ``question_ids`` (kept in sorted order)."""
        keep = set(question_ids)
        return AnswerGrid(tuple(q for q in self.question_ids if q in keep), self.states,
                          self.repeats, self.answers, self.doc_ids)

    @property
    def n(self) -> int:
        return len(self.question_ids)

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
        self._norm = {key: tuple(normalize(a) for a in vals) for key, vals in grid.answers.items()}

    def normalized(self, qid: str, ref: AnswerRef) -> str:
        return self._norm[(qid, ref.state)][ref.repeat - 1]

    def same(self, qid: str, a: AnswerRef, b: AnswerRef) -> bool:
        return self.normalized(qid, a) == self.normalized(qid, b)


class SemanticKernel:
    """One judge's pair labels; a pair the kernel needs but the judge did not label is an error."""

    name = "semantic"

    def __init__(self, labels: Sequence[PairLabel], judge: str):
        self.judge = judge
        self._same: dict[tuple[str, AnswerRef, AnswerRef], bool] = {}
        for lab in labels:
            if lab.judge == judge:
                lo, hi = sorted((lab.a, lab.b))
                self._same[(lab.question_id, lo, hi)] = lab.same

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
