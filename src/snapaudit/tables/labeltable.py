"""Pair labels held as columns: what ``read_labels`` returns.

Millions of labels (10^5 questions x 45 pairs x 2 judges) do not fit well as Python objects;
a :class:`LabelTable` keeps integer codes in numpy arrays and is a ``Sequence[PairLabel]`` that
builds each :class:`PairLabel` only when asked (equal to any sequence of the same labels).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence

import numpy as np

from snapaudit.tables.answertable import AnswerTable
from snapaudit.tables.records import AnswerRef, AnswerRow, PairLabel
from snapaudit.tables.rowview import ColumnRows


class LabelTable(ColumnRows[PairLabel]):
    """Labels as codes: ``q`` indexes ``questions``, ``a``/``b`` index ``refs``, ``judge``
    indexes ``judges``; ``same`` is the decision. Row order is the file's order."""

    def __init__(self, questions: Sequence[str], refs: Sequence[AnswerRef],
                 judges: Sequence[str], q: np.ndarray, a: np.ndarray, b: np.ndarray,
                 same: np.ndarray, judge: np.ndarray):
        self.questions = tuple(questions)
        self.refs = tuple(refs)
        self.judges = tuple(judges)
        self.q = np.asarray(q, dtype=np.int32)
        self.a = np.asarray(a, dtype=np.int32)
        self.b = np.asarray(b, dtype=np.int32)
        self.same = np.asarray(same, dtype=np.bool_)
        self.judge = np.asarray(judge, dtype=np.int32)

    @classmethod
    def from_labels(cls, labels: Sequence[PairLabel]) -> LabelTable:
        if isinstance(labels, LabelTable):
            return labels
        qs: dict[str, int] = {}
        refs: dict[AnswerRef, int] = {}
        judges: dict[str, int] = {}
        cols: list[list[int]] = [[], [], [], [], []]
        for lab in labels:
            cols[0].append(qs.setdefault(lab.question_id, len(qs)))
            cols[1].append(refs.setdefault(lab.a, len(refs)))
            cols[2].append(refs.setdefault(lab.b, len(refs)))
            cols[3].append(lab.same)
            cols[4].append(judges.setdefault(lab.judge, len(judges)))
        return cls(list(qs), list(refs), list(judges), np.array(cols[0], dtype=np.int32),
                   np.array(cols[1], dtype=np.int32), np.array(cols[2], dtype=np.int32),
                   np.array(cols[3], dtype=np.bool_), np.array(cols[4], dtype=np.int32))

    def __len__(self) -> int:
        return int(self.q.shape[0])

    def _row(self, i: int) -> PairLabel:
        return PairLabel(self.questions[self.q[i]], self.refs[self.a[i]], self.refs[self.b[i]],
                         bool(self.same[i]), self.judges[self.judge[i]])

    def __iter__(self) -> Iterator[PairLabel]:
        qs, refs, judges = self.questions, self.refs, self.judges
        for q, a, b, s, j in zip(self.q.tolist(), self.a.tolist(), self.b.tolist(),
                                 self.same.tolist(), self.judge.tolist(), strict=True):
            yield PairLabel(qs[q], refs[a], refs[b], s, judges[j])

    def __repr__(self) -> str:
        return f"LabelTable({len(self)} labels, {len(self.judges)} judge(s))"

    def for_judge(self, judge: str) -> np.ndarray:
        """Row mask of ``judge``'s labels."""
        if judge not in self.judges:
            return np.zeros(len(self), dtype=np.bool_)
        mask: np.ndarray = self.judge == self.judges.index(judge)
        return mask

    def pair_keys(self) -> np.ndarray:
        """One int64 per row naming (judge, question, unordered pair)."""
        nq, nr = max(1, len(self.questions)), max(1, len(self.refs))
        lo, hi = np.minimum(self.a, self.b), np.maximum(self.a, self.b)
        keys: np.ndarray = ((self.judge.astype(np.int64) * nq + self.q) * nr + lo) * nr + hi
        return keys

    def _distinct_pairs(self) -> bool:
        """No self pair and no repeated (judge, pair); remembered for these arrays."""
        arrays = (self.q, self.a, self.b, self.judge)
        seen = self.__dict__.get("_distinct")
        if seen is None or any(x is not y for x, y in zip(seen[0], arrays, strict=True)):
            ok = not bool(np.any(self.a == self.b))
            if ok:
                nq, nr = max(1, len(self.questions)), max(1, len(self.refs))
                ok = all_distinct(self.pair_keys(), max(1, len(self.judges)) * nq * nr * nr)
            seen = self.__dict__["_distinct"] = (arrays, ok)
        return bool(seen[1])

    def clean(self, answers: Sequence[AnswerRow] | None, *,
              grid: tuple[Mapping[str, int], Sequence[str], int] | None = None) -> bool:
        """True when no label pairs an answer with itself, repeats a (judge, pair) or names
        an answer missing from ``answers`` or from a full ``grid`` (question index, states,
        repeats). False means: find the exact problem row by row."""
        if len(self) == 0:
            return True
        if not self._distinct_pairs():
            return False
        if grid is not None:
            index, states, repeats = grid
            q_ok = np.array([q in index for q in self.questions], dtype=np.bool_)
            r_ok = np.array([r.state in states and 1 <= r.repeat <= repeats for r in self.refs],
                            dtype=np.bool_)
            if not (q_ok[self.q].all() and r_ok[self.a].all() and r_ok[self.b].all()):
                return False
        if answers is None:
            return True
        return _all_known(self, answers)


def _all_known(table: LabelTable, answers: Sequence[AnswerRow]) -> bool:
    qget = {q: i for i, q in enumerate(table.questions)}.get
    rget = {(r.state, r.repeat): i for i, r in enumerate(table.refs)}.get
    nr, n = len(table.refs), len(answers)
    if isinstance(answers, AnswerTable):  # the same codes, from the columns
        qcode = np.array([qget(q, -1) for q in answers.question_ids], dtype=np.int64)
        width = answers.repeats + 1
        rcode = np.array([rget((s, j), -1) for s in answers.states for j in range(width)],
                         dtype=np.int64)
        qi, ri = qcode[answers.q], rcode[answers.s * width + answers.repeat]
    else:
        qi = np.fromiter((qget(row.question_id, -1) for row in answers), np.int64, n)
        ri = np.fromiter((rget((row.state, row.repeat), -1) for row in answers), np.int64, n)
    ok = (qi >= 0) & (ri >= 0)
    have = np.zeros(max(1, len(table.questions)) * nr, dtype=np.bool_)
    have[qi[ok] * nr + ri[ok]] = True  # a table over (question, ref), not a sort
    base = table.q.astype(np.int64) * nr
    return bool(have[base + table.a].all() and have[base + table.b].all())


def ref_sides(states: Sequence[str], sides: list[tuple[np.ndarray, np.ndarray]]
              ) -> tuple[list[AnswerRef], list[np.ndarray]]:
    """The refs of both sides of the labels coded together: ``sides`` holds (state codes into
    ``states``, repeats >= 1) of side a and of side b, and is emptied as it is read (9M labels'
    columns are let go before the table over the codes is built). Returns the refs, ordered by
    (state code, repeat), and each side's codes into them."""
    width = max(int(repeat.max()) for _, repeat in sides) + 1
    # (state, repeat) codes per side, in 32 bits when they fit (9M labels: 18M codes)
    kind = np.dtype(np.int32 if len(states) * width < 1 << 31 else np.int64)
    scale = np.array(width, dtype=kind)
    keys = []
    while sides:
        state, repeat = sides.pop(0)
        keys.append(state.astype(kind) * scale + repeat.astype(kind))
        del state, repeat
    uniq, inverses = dense_unique_of(keys, len(states) * width)
    return [AnswerRef(states[int(c) // width], int(c) % width) for c in uniq], inverses


DENSE_MAX = 1 << 26  # the largest key space handled with a table over the keys (64 MiB)


def dense_unique(codes: np.ndarray, space: int | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.unique(codes, return_inverse=True)`` of non-negative integer codes below
    ``space`` (default: their maximum + 1), from a table over the codes instead of a sort
    when the space is at most :data:`DENSE_MAX`: the same sorted values and inverse."""
    values, (inverse,) = dense_unique_of([codes], space)
    return values, inverse


def dense_unique_of(arrays: list[np.ndarray], space: int | None = None
                    ) -> tuple[np.ndarray, list[np.ndarray]]:
    """:func:`dense_unique` of the concatenation of ``arrays``, its inverse split back per
    array (without building the concatenation when the table is used)."""
    dtype = arrays[0].dtype
    size = sum(a.size for a in arrays)
    if size == 0:
        return np.zeros(0, dtype=dtype), [np.zeros(0, dtype=np.intp) for _ in arrays]
    space = max(int(a.max()) for a in arrays if a.size) + 1 if space is None else space
    if space > max(DENSE_MAX, 2 * size):
        uniq, inverse = np.unique(np.concatenate(arrays), return_inverse=True)
        cuts = np.cumsum([a.size for a in arrays])[:-1]
        return uniq, np.split(inverse, cuts)
    present = np.zeros(space, dtype=np.bool_)
    for a in arrays:
        present[a] = True
    values = np.flatnonzero(present)
    rank = np.zeros(space, dtype=np.intp)
    rank[values] = np.arange(values.size)
    return values.astype(dtype), [rank[a] for a in arrays]


def all_distinct(keys: np.ndarray, space: int) -> bool:
    """No key of ``keys`` (non-negative integers below ``space``) occurs twice."""
    if keys.size < 2:
        return True
    if space > max(DENSE_MAX, 2 * keys.size):
        ordered = np.sort(keys)
        return not bool(np.any(ordered[1:] == ordered[:-1]))
    seen = np.zeros(space, dtype=np.bool_)
    seen[keys] = True
    return int(np.count_nonzero(seen)) == keys.size
