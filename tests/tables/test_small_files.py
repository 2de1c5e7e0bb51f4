"""Small tables go through the numpy template readers too, with a buffer sized to the file.

The template readers import nothing beyond numpy; before, a file under 1 MiB (answers, gold)
or 8 MiB (labels) went to the line readers, and each template read zeroed a 32 MiB buffer.
"""

from __future__ import annotations

import os
from pathlib import Path

from snapaudit.tables import AnswerRow, AnswerTable, read_answers, read_gold, write_answers
from snapaudit.tables.labels import parse_labels
from snapaudit.tables.labeltable import LabelTable
from snapaudit.tables.templaterows import BLOCK, _block_size

ROWS = [AnswerRow(q, s, j, a) for q, a in (("q1", "Oslo"), ("q2", "Rome"))
        for s in ("n0", "n1") for j in (1, 2)]
LABEL = ('{{"question_id": "{q}", "a": {{"state": "n0", "repeat": 1}}, '
         '"b": {{"state": "n0", "repeat": 2}}, "same": true, "judge": "default"}}\n')


def test_block_of_a_small_file_is_its_size_and_one(tmp_path: Path) -> None:
    path = tmp_path / "f.jsonl"
    path.write_bytes(b"x" * 1000)
    with open(path, "rb") as f:
        assert _block_size(f.fileno(), BLOCK) == 1001
        assert _block_size(f.fileno(), 500) == 500  # a block smaller than the file stays
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    with open(empty, "rb") as f:
        assert _block_size(f.fileno(), BLOCK) == 1


def test_block_of_a_pipe_is_the_full_block() -> None:
    read, write = os.pipe()
    try:
        assert _block_size(read, BLOCK) == BLOCK
    finally:
        os.close(read)
        os.close(write)


def test_small_answers_and_gold_read_by_the_template_reader(tmp_path: Path) -> None:
    path = tmp_path / "answers.jsonl"
    write_answers(path, ROWS)
    table = read_answers(path)
    assert isinstance(table, AnswerTable)
    assert list(table) == ROWS
    lines = read_answers(path, fast=False)  # the line reader: the same rows, as a list
    assert isinstance(lines, list) and lines == ROWS
    gold = tmp_path / "gold.jsonl"
    gold.write_text('{"question_id": "q1", "answers": ["Oslo", "oslo city"]}\n'
                    '{"question_id": "q2", "answers": ["Rome"]}\n', encoding="utf-8")
    assert read_gold(gold) == {"q1": ("Oslo", "oslo city"), "q2": ("Rome",)}


def test_small_labels_parsed_by_the_template_reader(tmp_path: Path) -> None:
    path = tmp_path / "labels.jsonl"
    path.write_text(LABEL.format(q="q1") + LABEL.format(q="q2"), encoding="utf-8")
    table = parse_labels(path)
    assert isinstance(table, LabelTable) and len(table) == 2
    assert [lab.question_id for lab in table] == ["q1", "q2"]
