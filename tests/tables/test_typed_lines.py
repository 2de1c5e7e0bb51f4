"""JSONL through msgspec: the typed columns equal the checking reader's rows, or decline.

Differential: generated answers, labels and gold in several layouts (key orders, separators,
escapes, unicode, optional fields, shuffled rows), read in blocks small enough that lines
straddle them, against the checking reader (``fast=False``). Adversarial: one-line mutations
of a valid file, whose outcome through the default reader (rows, or the error message with
file and line) must be the checking reader's.
"""

from __future__ import annotations

import json
import os
import random
import threading
from pathlib import Path
from typing import Any

import pytest

from snapaudit.errors import InputError
from snapaudit.tables import (
    AnswerRef,
    AnswerRow,
    AnswerTable,
    LabelTable,
    PairLabel,
    read_answers,
    read_gold,
    read_labels,
)
from snapaudit.tables.answers import answer_record
from snapaudit.tables.decoded import answer_table, gold_table, label_table
from snapaudit.tables.jsonl import Declined

BLOCKS = [8 << 20, 2048, 300]  # 300: shorter than some lines (the buffer grows)


def _dump(objs: list[dict[str, Any]], style: str) -> str:
    seps = (",", ":") if "compact" in style else (", ", ": ")
    return "".join(json.dumps(o, ensure_ascii="ascii" in style, separators=seps,
                              sort_keys="sorted" in style) + "\n" for o in objs)


def _answers(seed: int, docs: bool, question: bool) -> list[AnswerRow]:
    rng = random.Random(seed)
    words = ["Oslo", "the Oslo", 'é 日本 🙂', 'a ] b, "c"', "x" * 400, "{not json}\\"]
    return [AnswerRow(q, s, j, rng.choice(words),
                      tuple(rng.choice(["d1", "d22", "ü", 'd,"4']) for _ in
                            range(rng.randrange(0, 4))) if docs else None,
                      f"Where is {q}?\n" if question else None)
            for q in (f"q{'z' * (i % 7)}{i}" for i in range(12))
            for s in ("n0", "p2.n3", "a-long_state.9x") for j in (2, 1, 3)]


@pytest.mark.parametrize("style", ["default", "sorted", "compact-ascii", "compact-sorted"])
@pytest.mark.parametrize("fields", [(True, True), (True, False), (False, True)])
def test_answers_equal_the_checked_rows(tmp_path: Path, style: str,
                                        fields: tuple[bool, bool]) -> None:
    rows = _answers(len(style), *fields)
    random.Random(1).shuffle(rows)
    path = tmp_path / "answers.jsonl"
    path.write_text(_dump([answer_record(r) for r in rows], style), encoding="utf-8")
    assert read_answers(path, fast=False) == rows
    for block in BLOCKS:
        table = answer_table(path, block)
        assert isinstance(table, AnswerTable) and list(table) == rows, block
        values, codes = table.answer_codes
        assert [values[c] for c in codes.tolist()] == [r.answer for r in rows]


def _labels(seed: int) -> list[PairLabel]:
    rng = random.Random(seed)
    refs = [AnswerRef(s, r) for s in ("n0", "n1.x") for r in (1, 2, 3)]
    return [PairLabel(q, a, b, rng.random() < 0.6, j) for j in ("default", "jü")
            for q in ("q1", "q2", "q 3") for i, a in enumerate(refs) for b in refs[i + 1:]]


@pytest.mark.parametrize("style", ["default", "sorted", "compact-ascii"])
def test_labels_equal_the_checked_labels(tmp_path: Path, style: str) -> None:
    labels = _labels(len(style))
    random.Random(2).shuffle(labels)
    objs = [{"question_id": x.question_id, "a": {"state": x.a.state, "repeat": x.a.repeat},
             "b": {"repeat": x.b.repeat, "state": x.b.state}, "same": x.same, "judge": x.judge}
            for x in labels]
    first, second, third = [i for i, x in enumerate(labels) if x.judge == "default"][:3]
    objs[first]["judge"], objs[second]["judge"] = "", None  # "default", as one left out
    del objs[third]["judge"]
    path = tmp_path / "labels.jsonl"
    path.write_text(_dump(objs, style), encoding="utf-8")
    expected = list(read_labels(path, fast=False))
    assert expected == labels
    for block in BLOCKS:
        table = label_table(path, block)
        assert isinstance(table, LabelTable) and list(table) == expected, block
        assert table.judges == tuple(dict.fromkeys(x.judge for x in expected))


def _line(q: str, s: str, j: int, answer: str) -> str:
    return (f'{{"question_id": "{q}", "state": "{s}", "repeat": {j}, "answer": "{answer}", '
            f'"doc_ids": ["d{j}", "e"], "question": "Q {q}?"}}')


BASE = [_line(f"q{i}", s, j, "Oslo" if i % 3 else "Rome")
        for i in range(6) for s in ("n0", "n1") for j in (1, 2)]
LINE = BASE[9]  # {"question_id": "q2", "state": "n0", "repeat": 2, "answer": "Oslo", ...
MUTATIONS = {  # accepted or not, the default reader's outcome is the checking reader's
    "escaped quote": ('"Oslo"', '"Os\\"lo"'), "unicode escape": ('"Oslo"', '"\\u00d6slo"'),
    "empty doc ids": ('["d2", "e"]', "[]"), "null doc ids": ('["d2", "e"]', "null"),
    "doc id not a string": ('"e"]', "3]"), "missing question": (', "question": "Q q2?"', ""),
    "cluster": ('"Q q2?"}', '"Q q2?", "cluster": "c"}'),
    "keys reordered": ('"state": "n0", "repeat": 2', '"repeat": 2, "state": "n0"'),
    "duplicate row": ('"repeat": 2', '"repeat": 1'), "hole": ('"repeat": 2', '"repeat": 3'),
    "tab in the answer": ('"Oslo"', '"Os\tlo"'), "leading zero": ('"repeat": 2', '"repeat": 02'),
    "repeat zero": ('"repeat": 2', '"repeat": 0'),
    "repeat a float": ('"repeat": 2', '"repeat": 2.0'),
    "repeat a bool": ('"repeat": 2', '"repeat": true'), "unknown key": ('{"q', '{"x": 1, "q'),
    "blank answer": ('"Oslo"', '" "'), "bad state name": ('"n0"', '"n 0"'),
    "two objects": ('?"}', '?"} {"a": 1}'), "not an object": (LINE, "[1, 2]"),
    "missing answer": (', "answer": "Oslo"', ""), "blank line": ('?"}', '?"}\n   '),
    "crlf": ('?"}', '?"}\r'), "trailing space": ('?"}', '?"} '),
}


def _outcome(path: Path, fast: bool) -> Any:
    try:
        return list(read_answers(path, fast=fast))
    except InputError as exc:
        return str(exc)


@pytest.mark.parametrize("where", [0, 9, 23])
@pytest.mark.parametrize("name", sorted(MUTATIONS))
def test_mutations_read_as_the_checking_reader_reads_them(tmp_path: Path, name: str,
                                                          where: int) -> None:
    old, new = MUTATIONS[name]
    assert old in LINE
    lines = list(BASE)
    lines[9], lines[where] = lines[where], LINE.replace(old, new)  # rows swapped: a full grid
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert _outcome(path, True) == _outcome(path, False)


def test_bom_and_no_final_newline(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + "\n".join(BASE).encode())
    table = read_answers(path)
    assert isinstance(table, AnswerTable) and len(table) == len(BASE)
    assert table == read_answers(path, fast=False)


def test_an_error_names_the_line_after_blank_lines(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    path.write_text("\n".join([*BASE[:3], "", " ", BASE[3].replace('"Rome"', "7"),
                               *BASE[4:]]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="field 'answer' must be str, got int") as err:
        read_answers(path)
    assert (err.value.path, err.value.line) == (str(path), 6)


def test_empty_and_blank_files_have_no_rows(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    for text in ("", "\n\n", "  \n"):
        path.write_text(text, encoding="utf-8")
        with pytest.raises(Declined):
            answer_table(path)
        with pytest.raises(InputError, match="no answer rows"):
            read_answers(path)


GOLD = [f'{{"question_id": "q{i}", "answers": ["a{i}", "the a{i}"]}}' for i in range(30)]


@pytest.mark.parametrize(("old", "new", "accepted"), [
    ('"q7"', '"q7"', True), ('"a7"', '"a\\"7 ü"', True), ('"q7"', '"q6"', False),
    ('["a7", "the a7"]', "[]", False), ('"a7"', "7", False), ('"the a7"]', '"the a7"], "x": 1',
                                                               False),
])
def test_gold(tmp_path: Path, old: str, new: str, accepted: bool) -> None:
    path = tmp_path / "gold.jsonl"
    path.write_text("\n".join([*GOLD[:7], GOLD[7].replace(old, new), *GOLD[8:]]) + "\n",
                    encoding="utf-8")
    try:
        gold = gold_table(path, 300)
    except Declined:
        gold = None
    assert (gold is not None) == accepted
    if accepted:
        assert gold == read_gold(path, fast=False) and list(gold) == [f"q{i}" for i in range(30)]
        return
    with pytest.raises(InputError) as fast:
        read_gold(path)
    with pytest.raises(InputError) as checked:
        read_gold(path, fast=False)
    assert str(fast.value) == str(checked.value) and fast.value.line == 8


def test_a_pipe_is_read_once(tmp_path: Path) -> None:
    fifo = tmp_path / "table.fifo"
    os.mkfifo(fifo)
    good = ("\n".join(BASE) + "\n").encode()
    bad = good.replace(b'"repeat": 2', b'"repeat": 3', 1)  # found by the checking pass
    label = (b'{"question_id": "q1", "a": {"state": "n0", "repeat": 1}, '
             b'"b": {"state": "n1", "repeat": 2}, "same": true}\n')
    gold = b'{"question_id": "q1", "answers": ["Oslo"]}\n'
    for data in (good, bad, label, gold):
        writer = threading.Thread(target=fifo.write_bytes, args=(data,))
        writer.start()
        try:
            if data is good:
                assert read_answers(fifo) == read_answers(_file(tmp_path, good), fast=False)
            elif data is bad:
                with pytest.raises(InputError, match="question 'q0', state 'n0' has repeats"):
                    read_answers(fifo)
            elif data is label:
                assert list(read_labels(fifo)) == [
                    PairLabel("q1", AnswerRef("n0", 1), AnswerRef("n1", 2), True)]
            else:
                assert read_gold(fifo) == {"q1": ("Oslo",)}
        finally:
            writer.join()


def _file(folder: Path, data: bytes) -> Path:
    path = folder / "copy.jsonl"
    path.write_bytes(data)
    return path
