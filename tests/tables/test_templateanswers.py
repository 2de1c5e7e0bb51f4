"""The template answers reader gives exactly msgspec's table (``fast_answers``), or None.

Differential: generated files (both key orders, both separators, with and without the
optional fields, ragged and unicode values, shuffled rows), read in small blocks and chunks,
field by field against msgspec's reader. Adversarial: one-line mutations of a valid file, each
with the outcome it must have.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from snapaudit.errors import InputError
from snapaudit.tables import AnswerRow, AnswerTable, read_answers, read_gold, write_answers
from snapaudit.tables.decoded import answer_table, gold_table
from snapaudit.tables.jsonl import Declined
from snapaudit.tables.templateanswers import template_answers, template_gold

SIZES = [{}, {"block": 2048, "chunk": 7}, {"block": 1500, "chunk": 1}]


def fast_answers(path: Path) -> Any:
    """msgspec's reader, which the template reader stands in front of (None: declined)."""
    try:
        return answer_table(path)
    except Declined:
        return None


def fast_gold(path: Path) -> Any:
    """msgspec's reader, which the template reader stands in front of (None: declined)."""
    try:
        return gold_table(path)
    except Declined:
        return None


def _columns(table: AnswerTable) -> tuple[Any, ...]:
    values, codes = table.answer_codes
    return (table.question_ids, table.states, table.answers, table.doc_ids, table.questions,
            values, codes.dtype.str, codes.tolist(),
            *((a.dtype.str, a.tolist()) for a in (table.q, table.s, table.repeat, table.cells)))


def _rows(seed: int, docs: bool, question: bool, ragged: bool) -> list[AnswerRow]:
    rng = random.Random(seed)
    words = ["Oslo", "the Oslo", "é 日本 🙂", "a ] b, c", "x" * 40, "{not json}"] if ragged \
        else ["Oslo", "Rome"]
    qids = [f"q{'z' * (i % 11) if ragged else ''}{i:04d}" for i in range(12)]
    states = ["n0", "p2.n3", "a-long_state.9x"] if ragged else ["n0", "n1"]
    rows = [AnswerRow(q, s, j, rng.choice(words),
                      tuple(rng.choice(["d1", "d22", "ü", "d,4"])
                            for _ in range(rng.randrange(0 if ragged else 2, 5)))
                      if docs else None,
                      f"Where is {q}?" if question else None)
            for q in qids for s in states for j in (1, 2, 3)]
    if ragged:
        rng.shuffle(rows)
    return rows


def _write(path: Path, rows: list[AnswerRow], style: str) -> None:
    if style == "sorted":
        write_answers(path, rows)
        return
    seps = (",", ":") if style.startswith("compact") else (", ", ": ")
    lines = []
    for row in rows:
        obj: dict[str, Any] = {"question_id": row.question_id, "state": row.state,
                               "repeat": row.repeat, "answer": row.answer}
        if row.doc_ids is not None:
            obj["doc_ids"] = list(row.doc_ids)
        if row.question is not None:
            obj["question"] = row.question
        lines.append(json.dumps(obj, ensure_ascii=False, separators=seps,
                                sort_keys=style.endswith("sorted")) + "\n")
    path.write_text("".join(lines), encoding="utf-8")


@pytest.mark.parametrize("style", ["default", "sorted", "compact", "compact-sorted"])
@pytest.mark.parametrize("fields", [(True, True, False), (True, False, True),
                                    (False, True, True), (False, False, True)])
def test_equals_the_pyarrow_table(tmp_path: Path, style: str,
                                  fields: tuple[bool, bool, bool]) -> None:
    rows = _rows(len(style), *fields)
    path = tmp_path / "answers.jsonl"
    _write(path, rows, style)
    expected = fast_answers(path)
    assert expected is not None and list(expected) == rows
    for size in SIZES:
        table = template_answers(path, **size)
        assert table is not None, size
        assert _columns(table) == _columns(expected), size


def _line(q: str, s: str, j: int, answer: str) -> str:
    return (f'{{"question_id": "{q}", "state": "{s}", "repeat": {j}, "answer": "{answer}", '
            f'"doc_ids": ["d{j}", "e"], "question": "Q {q}?"}}')


BASE = [_line(f"q{i}", s, j, "Oslo" if i % 3 else "Rome")
        for i in range(6) for s in ("n0", "n1") for j in (1, 2)]
LINE = BASE[9]  # {"question_id": "q2", "state": "n0", "repeat": 2, "answer": "Oslo", ...
ACCEPTED = {
    "empty doc ids": ('["d2", "e"]', "[]"), "one doc id": ('["d2", "e"]', '["d2"]'),
    "unicode answer": ('"Oslo"', '"Ösló 🙂"'), "answer with brackets": ('"Oslo"', '"[a], {b}"'),
}
DECLINED = {
    "escaped quote": ('"Oslo"', '"Os\\"lo"'), "newline escape": ('"Oslo"', '"Os\\nlo"'),
    "unicode escape": ('"Oslo"', '"\\u00d6slo"'), "bracket in a doc id": ('"e"]', '"e]"]'),
    "compact list": ('["d2", "e"]', '["d2","e"]'), "trailing comma": ('"e"]', '"e", ]'),
    "null doc ids": ('["d2", "e"]', "null"), "doc id not a string": ('"e"]', "3]"),
    "missing question": (', "question": "Q q2?"', ""),
    "cluster": ('"Q q2?"}', '"Q q2?", "cluster": "c"}'), "keys reordered": (
        '"state": "n0", "repeat": 2', '"repeat": 2, "state": "n0"'),
    "duplicate row": ('"repeat": 2', '"repeat": 1'), "hole": ('"repeat": 2', '"repeat": 3'),
    "tab in the answer": ('"Oslo"', '"Os\tlo"'), "leading zero": ('"repeat": 2', '"repeat": 02'),
    "trailing space": ('?"}', '?"} '),
}


def _outcome(path: Path, fast: bool) -> Any:
    try:
        return list(read_answers(path, fast=fast))
    except InputError as exc:
        return str(exc)


def _check(path: Path, accepted: bool) -> None:
    for size in SIZES:
        table = template_answers(path, **size)
        if not accepted:
            assert table is None, size
            continue
        expected = fast_answers(path)
        assert table is not None and expected is not None, size
        assert _columns(table) == _columns(expected), size
    assert _outcome(path, True) == _outcome(path, False)  # through read_answers


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_mutations(tmp_path: Path, name: str) -> None:
    old, new = ACCEPTED[name]
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join([*BASE[:9], LINE.replace(old, new), *BASE[10:]]) + "\n",
                    encoding="utf-8")
    _check(path, True)


@pytest.mark.parametrize("where", [0, 9, 23])
@pytest.mark.parametrize("name", sorted(DECLINED))
def test_declined_mutations(tmp_path: Path, name: str, where: int) -> None:
    old, new = DECLINED[name]
    assert old in LINE
    lines = list(BASE)
    lines[9], lines[where] = lines[where], LINE.replace(old, new)  # rows swapped: a full grid
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _check(path, False)


def test_one_repeat_and_no_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(x for x in BASE if '"repeat": 1' in x) + "\n", encoding="utf-8")
    _check(path, False)  # fewer than 2 repeats: the line reader's error
    path.write_text("\n".join(BASE), encoding="utf-8")
    _check(path, True)


GOLD = [f'{{"question_id": "q{i}", "answers": ["a{i}", "the a{i}"]}}' for i in range(30)]


@pytest.mark.parametrize("text", [
    "\n".join(GOLD) + "\n",
    "\n".join(GOLD).replace(', "the a7"', "") + "\n",  # one alias
    "\n".join(GOLD).replace("q3", "qü ] 日") + "\n",
    "\n".join(json.dumps(json.loads(x), separators=(",", ":"), sort_keys=True)
              for x in GOLD) + "\n",
])
def test_gold_equals_the_pyarrow_dict(tmp_path: Path, text: str) -> None:
    path = tmp_path / "gold.jsonl"
    path.write_text(text, encoding="utf-8")
    expected = fast_gold(path)
    assert expected is not None
    for size in SIZES:
        gold = template_gold(path, **size)
        assert gold == expected and list(gold) == list(expected), size
    assert read_gold(path, fast=True) == read_gold(path, fast=False)


@pytest.mark.parametrize("old, new", [
    ('"q7"', '"q6"'),  # a question twice
    ('["a7", "the a7"]', "[]"), ('["a7", "the a7"]', "null"), ('"a7"', '"a\\"7"'),
    ('"a7"', "7"), ('"the a7"]', '"the a7"], "x": 1'), ('"a7", "the a7"', '"a7","the a7"'),
])
def test_gold_declined(tmp_path: Path, old: str, new: str) -> None:
    path = tmp_path / "gold.jsonl"
    path.write_text("\n".join([*GOLD[:7], GOLD[7].replace(old, new), *GOLD[8:]]) + "\n",
                    encoding="utf-8")
    assert old in GOLD[7]
    for size in SIZES:
        assert template_gold(path, **size) is None, size
