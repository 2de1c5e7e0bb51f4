"""The columnar fast path of the readers gives what the line-by-line reader gives, and
hands every input it cannot vouch for to the line reader (which names file and line)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from snapaudit.errors import InputError
from snapaudit.tables import (
    AnswerRef,
    AnswerRow,
    LabelTable,
    PairLabel,
    read_answers,
    read_gold,
    read_labels,
    write_answers,
    write_labels,
)
from snapaudit.tables.columnar import fast_answers, fast_gold, fast_labels


def _rows() -> list[AnswerRow]:
    return [AnswerRow(q, s, j, f"{q}{s}{j}ä", ("d1", "d2") if s == "A" else None,
                      "Q?" if j == 1 else None)
            for q in ("q2", "q1") for s in ("B", "A") for j in (1, 2)]


def _labels() -> list[PairLabel]:
    return [PairLabel("q1", AnswerRef("A", 1), AnswerRef("B", 2), True, "j1"),
            PairLabel("q2", AnswerRef("B", 1), AnswerRef("A", 1), False, "default"),
            PairLabel("q1", AnswerRef("A", 1), AnswerRef("B", 2), False, "j2")]


def test_fast_answers_equal_the_written_rows(tmp_path: Path) -> None:
    write_answers(tmp_path / "a.jsonl", _rows())
    fast = fast_answers(tmp_path / "a.jsonl")
    assert fast == _rows()
    for fast in (True, False, None):  # None: by size (this one: the line reader)
        assert read_answers(tmp_path / "a.jsonl", fast=fast) == _rows()


def test_fast_labels_table_and_sequence(tmp_path: Path) -> None:
    write_labels(tmp_path / "l.jsonl", _labels())
    table = fast_labels(tmp_path / "l.jsonl")
    assert isinstance(table, LabelTable)
    assert table == _labels() and _labels() == table
    assert list(table) == _labels() and table[1] == _labels()[1] and table[-1] == _labels()[2]
    assert table[0:2] == _labels()[0:2]
    assert table.judges == ("j1", "default", "j2")
    assert np.array_equal(table.for_judge("j2"), [False, False, True])
    for fast in (True, False, None):
        assert read_labels(tmp_path / "l.jsonl", _rows(), fast=fast) == _labels()


def test_missing_and_empty_judge_mean_default(tmp_path: Path) -> None:
    lines = [{"question_id": "q", "a": {"state": "A", "repeat": 1},
              "b": {"state": "A", "repeat": 2}, "same": True, "judge": j} for j in ("", None)]
    del lines[1]["judge"]
    lines[1]["b"] = {"state": "B", "repeat": 1}
    path = tmp_path / "l.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in lines), encoding="utf-8")
    for fast in (True, False):
        assert [lab.judge for lab in read_labels(path, fast=fast)] == ["default", "default"]


def test_fast_gold(tmp_path: Path) -> None:
    path = tmp_path / "g.jsonl"
    path.write_text('{"question_id": "b", "answers": ["x", "y"]}\n'
                    '{"question_id": "a", "answers": ["z"]}\n', encoding="utf-8")
    assert fast_gold(path) == {"b": ("x", "y"), "a": ("z",)}
    for fast in (True, False, None):
        assert read_gold(path, fast=fast) == {"b": ("x", "y"), "a": ("z",)}


@pytest.mark.parametrize("text", [
    '{"question_id": "q", "state": "A", "repeat": 1, "answer": "x"}\n\n',  # blank line
    '{"question_id": "q", "state": "A", "repeat": 1, "answer": "x"} {"question_id": "q"}\n',
    '{"question_id": "q", "state": "A", "repeat": 1, "answer": "x", "doc_ids": [null]}\n',
    '{"question_id": "q", "state": "A", "repeat": 1.0, "answer": "x"}\n',
    '{"question_id": "q", "question_id": "r", "state": "A", "repeat": 1, "answer": "x"}\n',
])
def test_fast_path_declines_what_it_cannot_vouch_for(tmp_path: Path, text: str) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(text, encoding="utf-8")
    assert fast_answers(path) is None


def test_declined_input_gets_the_line_readers_error(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    good = '{"question_id": "q", "state": "A", "repeat": %d, "answer": "x"}\n'
    path.write_text(good % 1 + good % 2 + '{"question_id": "q"} {"a": 1}\n', encoding="utf-8")
    with pytest.raises(InputError, match="not valid JSON: Extra data") as err:
        read_answers(path, fast=True)
    assert (err.value.path, err.value.line) == (str(path), 3)


def test_nested_unknown_field_is_named(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    path.write_text('{"question_id": "q", "a": {"state": "A", "repeat": 1, "x": 1}, '
                    '"b": {"state": "A", "repeat": 2}, "same": true}\n', encoding="utf-8")
    assert fast_labels(path) is None
    with pytest.raises(InputError, match="unknown field\\(s\\): x") as err:
        read_labels(path, fast=True)
    assert err.value.line == 1


def test_duplicate_question_with_many_lines_names_its_first_line(tmp_path: Path) -> None:
    rows = [{"question_id": f"q{i}", "state": s, "repeat": j, "answer": "x"}
            for i in range(300) for s in "AB" for j in (1, 2)]
    rows.append({"question_id": "q299", "state": "C", "repeat": 1, "answer": "x"})
    path = tmp_path / "a.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in rows), encoding="utf-8")
    with pytest.raises(InputError, match="question 'q0' is missing state") as err:
        read_answers(path, fast=True)
    assert err.value.line == 1


def test_answer_table_is_the_rows_and_gives_the_same_grid(tmp_path: Path) -> None:
    import random

    from snapaudit.stats.cluster import resampling
    from snapaudit.stats.kernels import AnswerGrid
    from snapaudit.tables import AnswerTable

    rng = random.Random(3)
    rows = [AnswerRow(f"q{q}", s, j, rng.choice(["x", "y", "z z"]),
                      (f"d{q}", "e") if rng.random() < 0.7 else None, None)
            for q in (5, 2, 9, 1) for s in ("C", "A", "B") for j in (2, 1, 3)]
    rng.shuffle(rows)  # questions, states and repeats in no particular order
    write_answers(tmp_path / "a.jsonl", rows)
    assert not isinstance(read_answers(tmp_path / "a.jsonl"), AnswerTable)  # small: by line
    table = read_answers(tmp_path / "a.jsonl", fast=True)
    assert isinstance(table, AnswerTable) and table.repeats == 3
    assert table == rows and rows == table and list(table) == rows
    assert table[0] == rows[0] and table[-1] == rows[-1] and table[3:5] == rows[3:5]
    fast, slow = AnswerGrid.from_rows(table), AnswerGrid.from_rows(rows)
    assert fast == slow
    assert list(fast.answers) == list(slow.answers)  # the same key order (first appearance)
    assert list(fast.doc_ids.items()) == list(slow.doc_ids.items())
    for grid in (fast, slow, fast.subset(["q9", "q1"])):  # codes name each cell's answer
        values, codes = grid.distinct
        assert len(set(values)) == len(values)
        assert [tuple(values[c] for c in row) for row in codes.tolist()] == list(
            grid.answers.values())
    assert resampling(table, fast.question_ids).groups is None
    labels = [PairLabel("q9", AnswerRef("B", 3), AnswerRef("C", 1), True)]
    assert read_labels_checks(tmp_path, labels, table)
    labels.append(PairLabel("q9", AnswerRef("B", 4), AnswerRef("C", 1), True))
    with pytest.raises(InputError, match="unknown answer: question 'q9', state 'B', repeat 4"):
        read_labels_checks(tmp_path, labels, table)


def read_labels_checks(tmp_path: Path, labels: list[PairLabel],
                       answers: Sequence[AnswerRow]) -> bool:
    write_labels(tmp_path / "l.jsonl", labels)
    return read_labels(tmp_path / "l.jsonl", answers) == labels


def test_doc_tuples_are_the_lists_and_shared() -> None:
    import random

    import pyarrow as pa

    from snapaudit.tables.columnar import _doc_tuples

    rng = random.Random(1)
    for _ in range(200):
        rows = [None if (r := rng.random()) < 0.15 else [] if r < 0.25 else
                [rng.choice(["a", "b", "dd", "é"]) for _ in range(rng.randint(1, 4))]
                for _ in range(rng.randint(0, 40))]
        got = _doc_tuples(pa.array(rows, type=pa.list_(pa.string())))
        assert got == [None if r is None else tuple(r) for r in rows]
        first: dict[tuple[str, ...], tuple[str, ...]] = {}
        assert all(first.setdefault(t, t) is t for t in got if t is not None)  # one tuple each


def test_a_line_longer_than_the_small_blocks_is_read_with_large_ones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from snapaudit.tables import columnar

    monkeypatch.setattr(columnar, "MIN_BLOCK", 1000)  # blocks of ~1 kB for this small file
    rows = [AnswerRow(f"q{i}", s, j, "x" * 5000 if (i, s, j) == (3, "A", 1) else "y")
            for i in range(5) for s in "AB" for j in (1, 2)]
    write_answers(tmp_path / "a.jsonl", rows)
    assert columnar._block_size(tmp_path / "a.jsonl") < 5000
    assert fast_answers(tmp_path / "a.jsonl") == rows


@pytest.mark.parametrize("block", [3, 1 << 24])
def test_segments_count_lines_like_the_line_reader(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int) -> None:
    from snapaudit.tables import columnar

    monkeypatch.setattr(columnar, "BLOCK", block)
    for data, lines in [(b"", 0), (b"a", 1), (b"a\n", 1), (b"a\nb", 2), (b"\n\n", 2),
                        (b"ab\ncd\nef", 3), (b"abc\n", 1), (b"a\n" * 7, 7)]:
        (tmp_path / "f").write_bytes(data)
        assert columnar._segments(tmp_path / "f") == lines, data
