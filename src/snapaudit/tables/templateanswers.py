"""Answers (and gold) files in the layouts snapaudit's writers and benches emit, read with numpy.

``write_answers`` writes ``json.dumps(..., sort_keys=True)`` lines; the benches and most
hand-written files use the documented key order (question_id, state, repeat, answer, doc_ids,
question); either with the default separators or the compact ones, ``doc_ids`` and
``question`` on every line or on none. Each is one template per line (see
:mod:`snapaudit.tables.templaterows`): the doc ids are read as the text between the brackets,
and each distinct such text is split in Python (it must be quoted ids joined by the
separator, nothing else).

It is a fast path in front of :func:`snapaudit.tables.columnar.fast_answers` and returns
exactly that reader's table, or None for the whole file: a line off the file's template (an
escape anywhere, another key order, a ``cluster`` or a null), invalid UTF-8, a line longer
than ``MAX_LINE`` bytes, or rows that are not a full grid (fewer than 2 repeats, a duplicate,
a hole).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TypeVar

import numpy as np

from snapaudit.tables.answertable import AnswerTable, coded_full_grid
from snapaudit.tables.templaterows import (
    BLOCK,
    CHUNK,
    DECLINED,
    Decline,
    Template,
    Token,
    compile_template,
    read_columns,
)

T = TypeVar("T")
ORDERS = (("question_id", "state", "repeat", "answer", "doc_ids", "question"),
          ("answer", "doc_ids", "question", "question_id", "repeat", "state"))


def _template(order: tuple[str, ...], item: str, key: str) -> Template:
    tokens: list[Token] = ["{"]
    for i, name in enumerate(order):
        tokens += [item] * bool(i) + [f'"{name}"{key}']
        if name == "repeat":
            tokens.append(("i", name))
        elif name in ("doc_ids", "answers"):
            tokens += ["[", ("l", name), "]"]
        else:
            tokens += ['"', ("s", name), '"']
    tokens.append("}")
    return compile_template(tokens)


SEPARATOR: dict[int, str] = {}  # id of a template: its item separator


def _family(orders: Iterable[tuple[str, ...]]) -> list[Template]:
    out = []
    for order in orders:
        for item, key in ((", ", ": "), (",", ":")):
            out.append(_template(order, item, key))
            SEPARATOR[id(out[-1])] = item
    return out


REQUIRED = ("question_id", "state", "repeat", "answer")
TEMPLATES = _family(tuple(f for f in order if f in REQUIRED + extra)
                    for extra in ((), ("doc_ids",), ("question",), ("doc_ids", "question"))
                    for order in ORDERS)
GOLD = _family([("question_id", "answers"), ("answers", "question_id")])


def _ids(text: str, quoted: str) -> tuple[str, ...]:
    """The ids of a list's text (between its brackets): quoted ids joined by ``quoted``'s
    separator (``quoted`` is it between two quotes); anything else declines."""
    if not text:
        return ()
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        raise Decline
    ids = tuple(text[1:-1].split(quoted))
    if text.count('"') != 2 * len(ids):  # a quote inside an id
        raise Decline
    return ids


def _per_row(values: Sequence[T], codes: np.ndarray) -> list[T]:
    table = np.empty(len(values), dtype=object)
    table[:] = values  # element by element: tuples stay tuples
    out: list[T] = table[codes].tolist()
    return out


def template_answers(path: str | Path, *, block: int = BLOCK, chunk: int = CHUNK
                     ) -> AnswerTable | None:
    """What :func:`~snapaudit.tables.columnar.fast_answers` returns for a file that follows
    one template throughout, or None (see the module doc). The file is read ``block`` bytes
    at a time (cut at a newline), checked ``chunk`` lines at a time."""
    try:
        template, codes, cols = read_columns(Path(path), TEMPLATES, block, chunk)
        quoted = f'"{SEPARATOR[id(template)]}"'
        docs = [_ids(text, quoted) for text in codes["doc_ids"].values] \
            if "doc_ids" in codes else None
    except DECLINED:
        return None
    repeat = cols["repeat"].astype(np.int64)
    if int(repeat.max()) < 2:
        return None
    qids, q = codes["question_id"].values, cols["question_id"]
    states, s = codes["state"].values, cols["state"]
    n = len(repeat)
    if not coded_full_grid(q, s, repeat, len(qids), len(states)):
        return None  # a duplicate or a hole in the grid
    values, answer = codes["answer"].values, cols["answer"]
    doc_ids: Sequence[tuple[str, ...] | None] = [None] * n if docs is None else _per_row(
        docs, cols["doc_ids"])
    questions: Sequence[str | None] = [None] * n if "question" not in codes else _per_row(
        codes["question"].values, cols["question"])
    return AnswerTable(qids, states, q, s, repeat, _per_row(values, answer), doc_ids,
                       questions, (values, answer.astype(np.int64)))


def template_gold(path: str | Path, *, block: int = BLOCK, chunk: int = CHUNK
                  ) -> dict[str, tuple[str, ...]] | None:
    """What :func:`~snapaudit.tables.columnar.fast_gold` returns for a gold JSONL file that
    follows one template throughout (``question_id`` and a non-empty ``answers`` list on each
    line, no question twice), or None."""
    try:
        template, codes, cols = read_columns(Path(path), GOLD, block, chunk)
        quoted = f'"{SEPARATOR[id(template)]}"'
        aliases = [_ids(text, quoted) for text in codes["answers"].values]
    except DECLINED:
        return None
    qids = codes["question_id"].values
    if len(qids) != len(cols["question_id"]) or not all(aliases):
        return None  # a question twice, or one without answers
    return dict(zip(qids, _per_row(aliases, cols["answers"]), strict=True))
