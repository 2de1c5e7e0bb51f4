"""read_tables: the labels parsed beside the answers' read give what sequential reads give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snapaudit.errors import InputError
from snapaudit.tables import read_answers, read_gold, read_labels, read_tables


def _write(tmp: Path, *, bad_answer: bool = False, bad_label: bool = False,
           unknown_ref: bool = False) -> tuple[Path, Path, Path]:
    answers, labels = tmp / "answers.jsonl", tmp / "labels.jsonl"
    rows, labs = [], []
    for q in range(6):
        for state in ("old", "new"):
            for r in (1, 2):
                rows.append({"question_id": f"q{q}", "state": state, "repeat": r,
                             "answer": f"a{q}{state[0]}"})
        labs.append({"question_id": f"q{q}", "a": {"state": "old", "repeat": 1},
                     "b": {"state": "new", "repeat": 3 if unknown_ref and q == 4 else 2},
                     "same": q % 2 == 0})
    text = [json.dumps(r) for r in rows]
    if bad_answer:
        text[5] = text[5].replace('"repeat": 2', '"repeat": "two"')
    answers.write_text("\n".join(text) + "\n", encoding="utf-8")
    ltext = [json.dumps(x) for x in labs]
    if bad_label:
        ltext[2] = ltext[2][:-1]  # not JSON
    labels.write_text("\n".join(ltext) + "\n", encoding="utf-8")
    gold = tmp / "gold.jsonl"
    gold.write_text("".join(json.dumps({"question_id": f"q{q}", "answers": [f"g{q}"]}) + "\n"
                            for q in range(6)), encoding="utf-8")
    return answers, labels, gold


def test_the_same_tables_as_reading_one_after_another(tmp_path: Path) -> None:
    answers, labels, gold = _write(tmp_path)
    rows, labs, gold_map = read_tables(answers, labels, gold)
    seq_rows = read_answers(answers)
    assert list(rows) == list(seq_rows) and len(rows) == 24
    assert list(labs) == list(read_labels(labels, seq_rows)) and len(labs) == 6
    assert [x.same for x in labs] == [True, False, True, False, True, False]
    assert gold_map == read_gold(gold) and gold_map["q3"] == ("g3",)


def test_without_labels_or_gold(tmp_path: Path) -> None:
    answers, _, _ = _write(tmp_path)
    rows, labs, gold_map = read_tables(answers)
    assert len(rows) == 24 and labs == [] and gold_map is None


def test_the_answers_error_comes_first_as_in_a_sequential_read(tmp_path: Path) -> None:
    answers, labels, gold = _write(tmp_path, bad_answer=True, bad_label=True)
    with pytest.raises(InputError) as seq:
        read_answers(answers)
    with pytest.raises(InputError) as both:
        read_tables(answers, labels, gold)
    assert str(both.value) == str(seq.value) and "answers.jsonl" in str(both.value)


def test_a_labels_error_is_the_line_readers(tmp_path: Path) -> None:
    for kind in ("bad_label", "unknown_ref"):
        answers, labels, gold = _write(tmp_path, **{kind: True})
        rows = read_answers(answers)
        with pytest.raises(InputError) as seq:
            read_labels(labels, rows)
        with pytest.raises(InputError) as both:
            read_tables(answers, labels, gold)
        assert str(both.value) == str(seq.value) and "labels.jsonl" in str(both.value), kind


def _break_gold(gold: Path) -> None:
    lines = gold.read_text(encoding="utf-8").splitlines()
    lines[3] = lines[3].replace('"answers": ["g3"]', '"answers": []')  # no gold answers
    gold.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_a_gold_error_comes_after_the_answers_and_labels_errors(tmp_path: Path) -> None:
    answers, labels, gold = _write(tmp_path, bad_label=True)
    _break_gold(gold)
    with pytest.raises(InputError) as labels_first:  # the gold is read in a worker meanwhile
        read_tables(answers, labels, gold)
    assert "labels.jsonl" in str(labels_first.value)
    answers, labels, gold = _write(tmp_path)
    _break_gold(gold)
    with pytest.raises(InputError) as seq:
        read_gold(gold)
    with pytest.raises(InputError) as both:
        read_tables(answers, labels, gold)
    assert str(both.value) == str(seq.value) and "gold.jsonl" in str(both.value)
    assert "no gold answers" in str(both.value)
