"""The typed records of a JSONL table (:mod:`snapaudit.tables.jsonl`) as the column tables.

Each block's records are coded column by column (every distinct question, state, answer,
doc-id list, ref and judge gets a number in order of first appearance) and the records are
let go before the next block, so 9M labels never exist as objects at once. What the typed
decode cannot check is checked on the distinct values (state names, repeats >= 1, non-blank
answers, a full grid, no question twice in gold): any problem returns None, and the caller
reads the file line by line for the exact error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from operator import attrgetter
from typing import Any, TypeVar

import msgspec
import numpy as np

from snapaudit.tables.answertable import AnswerTable, coded_full_grid
from snapaudit.tables.jsonl import (
    BLOCK,
    DOC_IDS,
    GoldLine,
    Lines,
    Source,
    answer_line,
    label_line,
    typed_blocks,
)
from snapaudit.tables.labeltable import LabelTable
from snapaudit.tables.records import AnswerRef, Step
from snapaudit.tables.steps import checked_lines
from snapaudit.tables.turns import fits

STATE_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")  # as in the protocol's states.order
T = TypeVar("T")


class Codes(dict[Any, int]):
    """Each distinct key's number, in order of first appearance."""

    def __missing__(self, key: Any) -> int:
        code = self[key] = len(self)
        return code

    def of(self, keys: Iterable[Any], count: int = -1) -> np.ndarray:
        return np.fromiter(map(self.__getitem__, keys), np.int64, count)


def per_row(values: Sequence[T], codes: np.ndarray) -> list[T]:
    """``values[code]`` for each row's code (equal values stay one object)."""
    table = np.empty(len(values), dtype=object)
    table[:] = values  # element by element: tuples stay tuples
    out: list[T] = table[codes].tolist()
    return out


_ANSWER = tuple(map(attrgetter, ("question_id", "state", "repeat", "answer", "doc_ids",
                                 "question", "cluster", "steps", "turn_answers")))


def answer_table(source: Source, block: int = BLOCK) -> AnswerTable | None:
    """The rows of an answers file as a table when every line decodes and they form a full
    grid without cluster labels; else None (the caller's line reader names the problem).
    :class:`~snapaudit.tables.jsonl.Declined` when a line does not decode."""
    lines = Lines(answer_line)
    codes = [Codes() for _ in range(6)]  # question, state, -, answer, doc ids, question text
    cols: list[list[np.ndarray]] = [[] for _ in range(6)]
    steps: list[tuple[Step, ...] | None] = []
    turns: list[tuple[str, ...] | None] = []
    for rows in typed_blocks(source, lines, block):
        if set(map(_ANSWER[6], rows)) != {None}:
            return None  # clusters: the rows are kept as records
        if not _steps(rows, steps) or not _turns(rows, turns):
            return None
        for k in (0, 1, 3, 5):
            cols[k].append(codes[k].of(map(_ANSWER[k], rows), len(rows)))
        cols[4].append(codes[4].of(map(bytes, map(_ANSWER[4], rows)), len(rows)))
        cols[2].append(np.fromiter(map(_ANSWER[2], rows), np.int64, len(rows)))
        lines.narrow(state=list(codes[1]))
    q, s, repeat, answer, docs, text = (np.concatenate(c) for c in cols)
    qids, states, answers = (list(codes[k]) for k in (0, 1, 3))
    if int(repeat.min()) < 1 or int(repeat.max()) < 2 or not all(map(STATE_NAME.match, states)) \
            or not all(map(str.strip, answers)):
        return None
    if not coded_full_grid(q, s, repeat, len(qids), len(states)):
        return None  # a duplicate or a hole in the grid
    doc_lists = _doc_lists(list(codes[4]))
    if doc_lists is None:
        return None
    return AnswerTable(qids, states, q, s, repeat, per_row(answers, answer),
                       per_row(doc_lists, docs), per_row(list(codes[5]), text),
                       (answers, answer), steps if any(x is not None for x in steps) else None,
                       turns if any(x is not None for x in turns) else None)


def _steps(rows: list[Any], out: list[tuple[Step, ...] | None]) -> bool:
    """Each row's steps appended to ``out`` (None: the row has none); False when a row's
    steps do not hold (the line reader then names the problem)."""
    raw = list(map(_ANSWER[7], rows))
    if not any(x is not None for x in raw):
        out += raw
        return True
    for lines in raw:
        steps = None if lines is None else checked_lines(lines)
        if lines is not None and steps is None:
            return False
        out.append(steps)
    return True


def _turns(rows: list[Any], out: list[tuple[str, ...] | None]) -> bool:
    """Each row's turn answers appended to ``out``; False when a row's do not hold (the
    line reader then names the problem)."""
    raw = list(map(_ANSWER[8], rows))
    out += raw
    return all(t is None or (fits(t) and t[-1] == r.answer) for t, r in zip(raw, rows,
                                                                            strict=True))


def _doc_lists(raws: list[bytes]) -> list[tuple[str, ...] | None] | None:
    """Each distinct raw ``doc_ids`` value decoded (equal lists share one tuple), or None
    when one is not a list of strings (or null)."""
    shared: dict[tuple[str, ...], tuple[str, ...]] = {}
    try:
        return [None if ids is None else shared.setdefault(ids, ids)
                for ids in map(DOC_IDS.decode, raws)]
    except msgspec.DecodeError:
        return None


_QUESTION, _PAIR, _SAME = (attrgetter("question_id"), attrgetter("a", "b", "judge"),
                          attrgetter("same"))


def label_table(source: Source, block: int = BLOCK) -> LabelTable | None:
    """The labels of a labels file as a table when every line decodes and names a valid
    state and repeat; else None. Not yet checked against the answers (``LabelTable.clean``).
    Each line's (a, b, judge) is coded as one key: a file names few such triples."""
    lines = Lines(label_line)
    questions, pairs = Codes(), Codes()
    cols: list[list[np.ndarray]] = [[], [], []]
    for rows in typed_blocks(source, lines, block):
        cols[0].append(questions.of(map(_QUESTION, rows), len(rows)))
        cols[1].append(pairs.of(map(_PAIR, rows), len(rows)))
        cols[2].append(np.fromiter(map(_SAME, rows), np.bool_, len(rows)))
        lines.narrow(state=list(dict.fromkeys(r.state for p in pairs for r in p[:2])),
                     judge=list(dict.fromkeys(p[2] for p in pairs if p[2] is not None))
                     or ["default"])
    refs, names = Codes(), Codes()  # by value: the narrowed and general records differ in type
    a, b, judge = (np.array(c, dtype=np.int64) for c in zip(
        *[(refs[x.state, x.repeat], refs[y.state, y.repeat], names[j or "default"])
          for x, y, j in pairs], strict=True))  # a judge left out or empty is "default"
    if not all(repeat >= 1 and STATE_NAME.match(state) for state, repeat in refs):
        return None
    q, pair, same = (np.concatenate(c) for c in cols)
    return LabelTable(list(questions), [AnswerRef(s, r) for s, r in refs],
                      list(names), q, a[pair], b[pair], same, judge[pair])


def gold_table(source: Source, block: int = BLOCK) -> dict[str, tuple[str, ...]] | None:
    """Gold of a gold JSONL file when every line decodes, names a question once and gives at
    least one answer; else None."""
    gold: dict[str, tuple[str, ...]] = {}
    count = 0
    for rows in typed_blocks(source, Lines(lambda: GoldLine), block):
        gold.update((row.question_id, row.answers) for row in rows)
        count += len(rows)
        if not all(row.answers for row in rows):
            return None
    return gold if len(gold) == count else None
