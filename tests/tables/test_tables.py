"""Readers, writers and every listed bad input of the table formats."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snapaudit.errors import InputError
from snapaudit.tables import (
    AnswerRef,
    AnswerRow,
    GoldRow,
    PairLabel,
    read_answers,
    read_gold,
    read_labels,
    validate_answers,
    validate_labels,
    write_answers,
    write_gold,
    write_labels,
)


def _jsonl(path: Path, objs: list[dict[str, object]]) -> Path:
    path.write_text("".join(json.dumps(o) + "\n" for o in objs), encoding="utf-8")
    return path


def _grid(q: str = "q1", states: tuple[str, ...] = ("A", "B"), r: int = 2
          ) -> list[dict[str, object]]:
    return [{"question_id": q, "state": s, "repeat": j, "answer": f"{s}{j}"}
            for s in states for j in range(1, r + 1)]


def test_answers_roundtrip(tmp_path: Path) -> None:
    rows = [AnswerRow("q1", s, j, f"ä{s}{j}", ("d1", "d2") if s == "A" else None, "Q?")
            for s in ("A", "B") for j in (1, 2)]
    write_answers(tmp_path / "a.jsonl", rows)
    assert read_answers(tmp_path / "a.jsonl") == rows


def test_labels_and_gold_roundtrip(tmp_path: Path) -> None:
    labels = [PairLabel("q1", AnswerRef("A", 1), AnswerRef("B", 2), True, "j1")]
    write_labels(tmp_path / "l.jsonl", labels)
    assert read_labels(tmp_path / "l.jsonl") == labels
    write_gold(tmp_path / "g.jsonl", {"q1": ("x", "y")})
    assert read_gold(tmp_path / "g.jsonl") == {"q1": ("x", "y")}
    write_gold(tmp_path / "g2.jsonl", [GoldRow("q2", ("z",))])
    assert read_gold(tmp_path / "g2.jsonl", "jsonl") == {"q2": ("z",)}


def test_label_judge_defaults(tmp_path: Path) -> None:
    obj = {"question_id": "q1", "a": {"state": "A", "repeat": 1},
           "b": {"state": "A", "repeat": 2}, "same": False}
    (lab,) = read_labels(_jsonl(tmp_path / "l.jsonl", [obj]))
    assert lab.judge == "default" and lab.same is False


@pytest.mark.parametrize(("objs", "line", "problem"), [
    ([*_grid(), _grid()[1]], 5, "duplicate row.*first at line 2"),
    ([*_grid(), {"question_id": "q2", "state": "A", "repeat": 1, "answer": "x"},
      {"question_id": "q2", "state": "A", "repeat": 2, "answer": "x"}],
     5, "question 'q2' is missing state"),
    ([o for o in _grid(r=3) if not (o["state"] == "B" and o["repeat"] == 2)], 1,
     "state 'B' has repeats \\[1, 3\\]"),
    (_grid(r=1), None, "fewer than 2 repeats"),
    ([{"question_id": "q", "state": "A", "repeat": 0, "answer": "x"}], 1, "1-based"),
    ([{"question_id": "q", "state": "A", "repeat": "1", "answer": "x"}], 1, "must be int"),
    ([{"question_id": "q", "state": "A", "repeat": True, "answer": "x"}], 1, "must be int"),
    ([{"question_id": "q", "state": "A", "repeat": 1}], 1, "missing field 'answer'"),
    ([{"question_id": "q", "state": "A", "repeat": 1, "answer": "x", "extra": 1}], 1,
     "unknown field"),
    ([{"question_id": "q", "state": "A", "repeat": 1, "answer": "x", "doc_ids": [1]}], 1,
     "list of strings"),
])
def test_bad_answers(tmp_path: Path, objs: list[dict[str, object]], line: int | None,
                     problem: str) -> None:
    path = _jsonl(tmp_path / "a.jsonl", objs)
    with pytest.raises(InputError, match=problem) as err:
        read_answers(path)
    assert err.value.path == str(path)
    assert err.value.line == line


def test_non_utf8_and_bad_json(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"question_id": "q"}\n{"answer": "\xff"}\n')
    with pytest.raises(InputError, match="not valid UTF-8") as err:
        read_answers(path)
    assert err.value.line == 2
    path.write_bytes(b"{nope\n")
    with pytest.raises(InputError, match="not valid JSON"):
        read_answers(path)
    path.write_bytes(b"[1]\n")
    with pytest.raises(InputError, match="JSON object"):
        read_answers(path)
    path.write_bytes(b"\n")
    with pytest.raises(InputError, match="no answer rows"):
        read_answers(path)


def _label(a: tuple[str, int], b: tuple[str, int], q: str = "q1") -> dict[str, object]:
    return {"question_id": q, "a": {"state": a[0], "repeat": a[1]},
            "b": {"state": b[0], "repeat": b[1]}, "same": True}


@pytest.mark.parametrize(("objs", "line", "problem"), [
    ([_label(("A", 1), ("C", 1))], 1, "unknown answer.*state 'C'"),
    ([_label(("A", 1), ("A", 3))], 1, "unknown answer.*repeat 3"),
    ([_label(("A", 1), ("A", 2), q="q9")], 1, "unknown answer.*question 'q9'"),
    ([_label(("A", 1), ("B", 1)), _label(("B", 1), ("A", 1))], 2, "duplicate label"),
    ([_label(("A", 1), ("A", 1))], 1, "with itself"),
    ([{"question_id": "q1", "a": {"state": "A", "repeat": 1}, "same": True}], 1,
     "missing field 'b'"),
    ([{**_label(("A", 1), ("B", 1)), "same": "yes"}], 1, "'same' must be bool"),
])
def test_bad_labels(tmp_path: Path, objs: list[dict[str, object]], line: int,
                    problem: str) -> None:
    answers = read_answers(_jsonl(tmp_path / "a.jsonl", _grid()))
    path = _jsonl(tmp_path / "l.jsonl", objs)
    with pytest.raises(InputError, match=problem) as err:
        read_labels(path, answers)
    assert (err.value.path, err.value.line) == (str(path), line)


def test_validators_on_python_objects() -> None:
    rows = [AnswerRow("q", "A", 1, "x"), AnswerRow("q", "A", 1, "y")]
    with pytest.raises(InputError, match="duplicate row"):
        validate_answers(rows)
    good = [AnswerRow("q", s, j, "x") for s in "AB" for j in (1, 2)]
    with pytest.raises(InputError, match="unknown answer"):
        validate_labels([PairLabel("q", AnswerRef("A", 1), AnswerRef("Z", 1), True)], good)


def test_bad_gold(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "g.jsonl", [{"question_id": "q", "answers": ["a"]},
                                         {"question_id": "q", "answers": ["b"]}])
    with pytest.raises(InputError, match="duplicate gold"):
        read_gold(path)
    path = _jsonl(tmp_path / "g.jsonl", [{"question_id": "q", "answers": []}])
    with pytest.raises(InputError, match="no gold answers"):
        read_gold(path)
    with pytest.raises(InputError, match="unknown gold format"):
        read_gold(path, "csv")
    path = _jsonl(tmp_path / "g.jsonl", [{"id": 1}])
    with pytest.raises(InputError, match="cannot tell the gold format"):
        read_gold(path)
    tsv = tmp_path / "t.tsv"
    tsv.write_text("Q?\tnot a list\n", encoding="utf-8")
    with pytest.raises(InputError, match="list literal") as err:
        read_gold(tsv)
    assert err.value.line == 1


def test_nq_open_and_dpr_tsv_small(tmp_path: Path) -> None:
    nq = _jsonl(tmp_path / "nq.jsonl", [{"question": "a?", "answer": ["x"]},
                                        {"question": "b?", "answer": ["y", "z"]}])
    assert read_gold(nq) == {"0": ("x",), "1": ("y", "z")}
    tsv = tmp_path / "t.txt"
    tsv.write_text('Who?\t"[\'A, B\', \'C\']"\nWhat?\t[\'D\']\n', encoding="utf-8")
    assert read_gold(tsv) == {"0": ("A, B", "C"), "1": ("D",)}


@pytest.mark.shared_data
def test_real_nq_open_gold(shared_data: Path) -> None:
    gold = read_gold(shared_data / "nq_open" / "NQ-open.dev.jsonl", "nq-open")
    assert read_gold(shared_data / "nq_open" / "NQ-open.dev.jsonl") == gold      # auto
    assert len(gold) == 3610
    assert gold["0"] == ("14 December 1972 UTC", "December 1972")
    assert gold["1"] == ("Bobby Scott", "Bob Russell")


@pytest.mark.shared_data
def test_real_dpr_triviaqa_gold(shared_data: Path) -> None:
    gold = read_gold(shared_data / "triviaqa" / "topics.dpr.trivia.test.txt")   # auto: .txt
    assert len(gold) == 11313
    assert gold["0"] == ("David Seville",)
    assert gold["1"] == ("Scorpio", "Skorpio", "Scorpio (disambiguation)")
    assert gold["2"][-1] == "Sunset Blvd."
