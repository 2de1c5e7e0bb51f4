"""The small-file labels reader: the full reader's columns, or None when a line needs a look."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from snapaudit.errors import InputError
from snapaudit.tables import AnswerRef, PairLabel, read_labels
from snapaudit.tables.quicklabels import quick_labels

GOOD = [
    '\ufeff{"question_id": "q2", "a": {"state": "n0", "repeat": 1}, '
    '"b": {"state": "n1", "repeat": 2}, "same": true}',
    '{"question_id": "q1", "a": {"state": "n1", "repeat": 2}, '
    '"b": {"state": "n0", "repeat": 1}, "same": false, "judge": "j2"}\r',
    "",
    '{"question_id": "q2", "b": {"state": "n1", "repeat": 1}, '
    '"a": {"state": "n0", "repeat": 1}, "same": false, "judge": ""}',
]


def _columns(table):  # type: ignore[no-untyped-def]
    return (table.questions, table.refs, table.judges, table.q.tolist(), table.a.tolist(),
            table.b.tolist(), table.same.tolist(), table.judge.tolist())


def test_same_columns_as_the_full_reader(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text("\n".join(GOOD) + "\n", encoding="utf-8")
    quick = quick_labels(path)
    assert quick is not None
    assert _columns(quick) == _columns(read_labels(path, fast=False))
    assert quick.questions == ("q2", "q1") and quick.judges == ("default", "j2")
    assert quick.refs == (AnswerRef("n0", 1), AnswerRef("n1", 2), AnswerRef("n1", 1))
    assert list(quick)[1] == PairLabel("q1", AnswerRef("n1", 2), AnswerRef("n0", 1), False, "j2")
    assert np.array_equal(quick.same, [True, False, False])


@pytest.mark.parametrize("line", [
    '[1, 2]',
    '{"question_id": "q", "a": {"state": "n0", "repeat": 1}, "b": {"state": "n1", "repeat": 1}}',
    '{"question_id": "q", "a": {"state": "n0", "repeat": 1}, "b": {"state": "n1", "repeat": 1},'
    ' "same": true, "extra": 1}',
    '{"question_id": 3, "a": {"state": "n0", "repeat": 1}, "b": {"state": "n1", "repeat": 1},'
    ' "same": true}',
    '{"question_id": "q", "a": {"state": "n0", "repeat": 0}, "b": {"state": "n1", "repeat": 1},'
    ' "same": true}',
    '{"question_id": "q", "a": {"state": "n 0", "repeat": 1}, "b": {"state": "n1", "repeat": 1},'
    ' "same": true}',
    '{"question_id": "q", "a": {"state": "n0", "repeat": true}, "b": {"state": "n1", '
    '"repeat": 1}, "same": true}',
    '{"question_id": "q", "a": {"state": "n0", "repeat": 1}, "b": {"state": "n1", "repeat": 1},'
    ' "same": 1}',
    '{"question_id": "q", "a": {"state": "n0", "repeat": 1}, "b": {"state": "n1", "repeat": 1},'
    ' "same": true, "judge": 7}',
    '{"question_id": "q", "a": {"state": "n0", "repeat": 1, "x": 1}, "b": {"state": "n1", '
    '"repeat": 1}, "same": true}',
    '{not json',
])
def test_a_line_it_cannot_vouch_for_goes_to_the_full_reader(tmp_path: Path, line: str) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(GOOD[0] + "\n" + line + "\n", encoding="utf-8")
    assert quick_labels(path) is None
    with pytest.raises(InputError) as err:
        read_labels(path)
    assert err.value.line == 2 and str(err.value).startswith(f"{path}:2: ")


def test_bad_utf8_and_empty_files_are_left_to_the_full_reader(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(GOOD[1].encode() + b"\n\xff\n")
    assert quick_labels(bad) is None
    with pytest.raises(InputError, match="not valid UTF-8"):
        read_labels(bad)
    empty = tmp_path / "empty.jsonl"
    empty.write_text("\n", encoding="utf-8")
    assert quick_labels(empty) is None
    assert len(read_labels(empty)) == 0


def test_a_duplicate_label_is_still_reported_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(GOOD[0] + "\n" + GOOD[0].removeprefix("\ufeff") + "\n", encoding="utf-8")
    assert quick_labels(path) is not None  # well-formed lines: the table's check finds it
    with pytest.raises(InputError, match=r"duplicate label .* \(first at line 1\)"):
        read_labels(path)
