"""``doc_hashes``: the documents' content hashes beside ``doc_ids`` in an answers table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snapaudit.errors import InputError
from snapaudit.tables import AnswerRow, read_answers, write_answers


def _rows(n: int) -> list[AnswerRow]:
    return [AnswerRow(f"q{i}", s, r, f"answer {i} {s}", (f"d{i}", "x"), f"question {i}",
                      doc_hashes=(f"h{i}{s}", "hx")) for i in range(n)
            for s in ("old", "new") for r in (1, 2)]


@pytest.mark.parametrize("n", [3, 6000], ids=["small", "large"])
def test_hashes_are_written_and_read_back(tmp_path: Path, n: int) -> None:
    path = tmp_path / "answers.jsonl"
    write_answers(path, _rows(n))
    assert list(read_answers(path)) == _rows(n)  # the checking reader; the column ones decline
    first = json.loads(path.read_text().splitlines()[0])
    assert first["doc_hashes"] == ["h0old", "hx"]


def test_hashes_survive_a_parquet_table(tmp_path: Path) -> None:
    path = tmp_path / "answers.parquet"
    write_answers(path, _rows(5))
    assert list(read_answers(path)) == _rows(5)


def test_hashes_must_be_one_per_doc_id(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    rows = [{"question_id": "q1", "state": s, "repeat": r, "answer": "a", "doc_ids": ["d1"],
             "doc_hashes": ["h1"]} for s in ("a", "b") for r in (1, 2)]
    rows[2]["doc_hashes"] = ["h1", "h2"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match=r"answers\.jsonl:3: field 'doc_hashes' must hold one "
                                         r"hash per entry of 'doc_ids'"):
        read_answers(path)
    del rows[2]["doc_ids"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    with pytest.raises(InputError, match="one hash per entry"):
        read_answers(path)
