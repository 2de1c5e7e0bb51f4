"""The template labels reader gives exactly msgspec's table (msgspec's reader), or None.

Differential: generated files of several shapes, read in small blocks and chunks (so that
lines straddle blocks and rows fall in many cursor classes), field by field against
msgspec's reader. Adversarial: one-line mutations of a valid file, each with the outcome it
must have (declined, or accepted and equal to pyarrow's table and to the line reader's labels).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from snapaudit.errors import InputError
from snapaudit.tables import AnswerRef, LabelTable, PairLabel, read_labels, write_labels
from snapaudit.tables.decoded import label_table
from snapaudit.tables.jsonl import Declined
from snapaudit.tables.templatelabels import template_labels

SIZES = [{}, {"block": 2048, "chunk": 7}, {"block": 1500, "chunk": 1}]


def fast_labels(path: Path) -> Any:
    """msgspec's reader, which the template reader stands in front of (None: declined)."""
    try:
        return label_table(path)
    except Declined:
        return None


def _columns(table: LabelTable) -> tuple[Any, ...]:
    """The labels in order, and the order of the questions and judges (the refs may be
    numbered in another order by each reader)."""
    return table.questions, table.judges, list(table)


def _bench_line(qid: str, a: tuple[str, int], b: tuple[str, int], same: bool, judge: str) -> str:
    return (f'{{"question_id": "{qid}", "a": {{"state": "{a[0]}", "repeat": {a[1]}}}, '
            f'"b": {{"state": "{b[0]}", "repeat": {b[1]}}}, "same": {"true" if same else "false"}, '
            f'"judge": "{judge}"}}')


def _labels(seed: int, qids: list[str], states: list[str], repeats: int, judges: list[str],
            shuffle: bool) -> list[PairLabel]:
    rng = random.Random(seed)
    refs = [AnswerRef(s, r) for s in states for r in range(1, repeats + 1)]
    out = [PairLabel(q, a, b, rng.random() < 0.6, j) for j in judges for q in qids
           for i, a in enumerate(refs) for b in refs[i + 1:]]
    keep = sorted(rng.sample(range(len(out)), min(len(out), 300)))  # small: 1-line chunks too
    out = [out[i] for i in keep]
    if shuffle:
        rng.shuffle(out)
    return out


def _write(path: Path, labels: list[PairLabel], style: str) -> None:
    if style == "sorted":  # snapaudit's own writer
        write_labels(path, labels)
        return
    objs = [{"question_id": x.question_id, "a": {"state": x.a.state, "repeat": x.a.repeat},
             "b": {"state": x.b.state, "repeat": x.b.repeat}, "same": x.same,
             "judge": x.judge} for x in labels]
    seps = (",", ":") if style.startswith("compact") else (", ", ": ")
    keys = style.endswith("sorted")
    path.write_text("".join(json.dumps(o, ensure_ascii=False, separators=seps, sort_keys=keys)
                            + "\n" for o in objs), encoding="utf-8")


SHAPES = {
    "bench": ([f"q{i:07d}" for i in range(30)], ["n0", "n1"], 3, ["default", "judge1"], False),
    "ragged": ([f"q{'x' * (i % 23)}{i}" for i in range(40)], ["p2.n3", "A", "a-very_long.state9"],
               12, ["default"], True),
    "unicode": (["é", "日本語-3", "q\u2028x", "🙂🙂🙂🙂🙂", "", "d\x7fel"], ["n0", "u.1"], 2,
                ["j", "jüdge"], True),
    "many": ([f"q{i}" for i in range(5)], [f"s{i}" for i in range(20)], 2,
             [f"j{i}" for i in range(20)], True),
}


@pytest.mark.parametrize("style", ["default", "sorted", "compact", "compact-sorted"])
@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_equals_the_pyarrow_table(tmp_path: Path, shape: str, style: str) -> None:
    labels = _labels(len(shape), *SHAPES[shape])
    path = tmp_path / "labels.jsonl"
    _write(path, labels, style)
    expected = fast_labels(path)
    assert expected is not None and list(expected) == labels
    for size in SIZES:
        table = template_labels(path, **size)
        assert table is not None, size
        assert _columns(table) == _columns(expected), size


def test_multi_digit_repeats_and_the_states_of_side_b_after_side_a(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(_bench_line("q", ("B", 1234567), ("A", 10), True, "default") + "\n"
                    + _bench_line("q", ("C", 2), ("B", 1), False, "default") + "\n",
                    encoding="utf-8")
    table = template_labels(path)
    assert table is not None and _columns(table) == _columns(fast_labels(path))  # type: ignore[arg-type]
    assert table.refs == (AnswerRef("B", 1), AnswerRef("B", 1234567), AnswerRef("C", 2),
                          AnswerRef("A", 10))  # states: a's in order, then b's new ones
    assert table.a.tolist() == [1, 2] and table.b.tolist() == [3, 0]


BASE = [_bench_line(f"q{i:03d}", ("n0", 1 + i % 3), ("n1", 2), i % 2 == 0,
                    "default" if i < 20 else "j2") for i in range(40)]
LINE = BASE[17]  # {"question_id": "q017", "a": {"state": "n0", "repeat": 3}, ...
ACCEPTED = {
    "no final newline": "\n".join(BASE).encode(),
    "duplicate line": "\n".join([*BASE[:18], LINE, *BASE[18:]]).encode() + b"\n",
    "unicode id": "\n".join(BASE).replace("q017", "qé日🙂").encode() + b"\n",
    "self pair": "\n".join(BASE).replace('"n1", "repeat": 2', '"n0", "repeat": 3', 1)
    .encode() + b"\n",
}
DECLINED = {
    "missing quote": ('"q017"', '"q017'), "escaped quote": ('"q017"', '"q0\\"17"'),
    "unicode escape": ('"q017"', '"q\\u0041"'), "slash escape": ('"q017"', '"q\\/"'),
    "leading zero": ('"repeat": 3', '"repeat": 03'), "zero": ('"repeat": 3', '"repeat": 0'),
    "negative": ('"repeat": 3', '"repeat": -3'), "float": ('"repeat": 3', '"repeat": 3.0'),
    "exponent": ('"repeat": 3', '"repeat": 3e0'), "8 digits": ('"repeat": 3', '"repeat": 12345678'),
    "capital False": ("false", "False"), "string false": ("false", '"false"'),
    "extra key": ('"default"}', '"default", "x": 1}'),
    "keys reordered": ('"same": false, "judge": "default"', '"judge": "default", "same": false'),
    "inner keys reordered": ('{"state": "n0", "repeat": 3}', '{"repeat": 3, "state": "n0"}'),
    "tab in a string": ('"q017"', '"q0\t17"'), "nul in a string": ('"q017"', '"q0\x0017"'),
    "trailing spaces": ('"default"}', '"default"}  '), "no space": ('"a": {', '"a":{'),
    "space before colon": ('"same":', '"same" :'), "null judge": ('"default"', "null"),
    "empty judge": ('"default"', '""'), "missing judge": (', "judge": "default"', ""),
    "two objects": ('"default"}', '"default"} {}'),
    "truncated": ('"default"}', '"default"'),
    "unterminated id": (LINE[LINE.index('"q017"'):], '"q017' + "x" * 30),
    "leading space": ('{"question_id"', ' {"question_id"'),
}


def _outcome(path: Path, fast: bool) -> Any:
    try:
        return list(read_labels(path, fast=fast))
    except InputError as exc:
        return str(exc)


def _check(path: Path, accepted: bool) -> None:
    for size in SIZES:
        table = template_labels(path, **size)
        if not accepted:
            assert table is None, size
            continue
        expected = fast_labels(path)
        assert table is not None and expected is not None, size
        assert _columns(table) == _columns(expected), size
    # through read_labels: what it gave before (pyarrow's table when clean, else the line
    # reader's labels or error)
    before = fast_labels(path)
    assert _outcome(path, True) == (list(before) if before is not None and before.clean(None)
                                    else _outcome(path, False))


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_mutations_give_the_full_readers_table(tmp_path: Path, name: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_bytes(ACCEPTED[name])
    _check(path, True)


@pytest.mark.parametrize("where", [0, 17, 39])
@pytest.mark.parametrize("name", sorted(DECLINED))
def test_declined_mutations(tmp_path: Path, name: str, where: int) -> None:
    old, new = DECLINED[name]
    lines = list(BASE)
    assert old in lines[17]
    lines[where] = LINE.replace(old, new)
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    _check(path, False)


@pytest.mark.parametrize("text", [
    "\n".join(BASE[:5]) + "\n\n" + "\n".join(BASE[5:]) + "\n",  # a blank line
    "\n".join(BASE) + "\n\n",  # a blank last line
    "\r\n".join(BASE) + "\r\n",  # CRLF
    "\ufeff" + "\n".join(BASE) + "\n",  # a byte-order mark
    "\n".join([*BASE[:3], json.dumps(json.loads(BASE[3]), separators=(",", ":"))]) + "\n",
    "", "\n",
])
def test_declined_files(tmp_path: Path, text: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(text, encoding="utf-8", newline="")
    _check(path, False)


def test_invalid_utf8_and_long_lines_are_declined(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    for bad in (b"q\xff", b"q\xc3", b"q\xed\xa0\x80", b"x" * 2000):  # a surrogate, a long id
        path.write_bytes("\n".join(BASE).encode().replace(b"q017", bad, 1) + b"\n")
        _check(path, False)
    path.write_bytes("\n".join(BASE).encode().replace(b"q017", b"x" * 900, 1) + b"\n")
    _check(path, True)  # long, but under MAX_LINE


def test_read_labels_gives_the_same_labels_through_either_reader(tmp_path: Path) -> None:
    labels = _labels(5, *SHAPES["ragged"])
    path = tmp_path / "labels.jsonl"
    write_labels(path, labels)
    table = read_labels(path, fast=True)
    assert isinstance(table, LabelTable) and list(table) == labels
    assert _columns(table) == _columns(fast_labels(path))  # type: ignore[arg-type]
    assert np.array_equal(table.same, [x.same for x in labels])
