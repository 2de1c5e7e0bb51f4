"""Cohort selection on the real benchmark files and on generic sources."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from snapaudit.errors import InputError, IntegrityError
from snapaudit.run.record.cohort import cohort_key, read_manifest, select, write_manifest
from snapaudit.run.record.protocol import CohortConfig


def test_cohort_key_is_the_documented_string() -> None:
    assert cohort_key(5, "17") == hashlib.sha256(b"snapaudit-cohort-v1|5|17").hexdigest()


@pytest.mark.shared_data
def test_nq_open_ids_are_line_numbers_and_order_is_hash_order(shared_data: Path) -> None:
    cfg = CohortConfig(source="nq-open", path="nq_open/NQ-open.dev.jsonl", size=25, seed=1)
    manifest = select(cfg, shared_data)
    ids = [q["question_id"] for q in manifest["questions"]]
    everything = sorted((cohort_key(1, str(i)), str(i)) for i in range(3610))
    assert ids == [i for _, i in everything[:25]]
    assert manifest["n_candidates"] == 3610
    lines = (shared_data / "nq_open/NQ-open.dev.jsonl").read_text().splitlines()
    first = manifest["questions"][0]
    assert first["question"] == json.loads(lines[int(first["question_id"])])["question"]
    assert "answer" not in json.dumps(manifest["questions"])  # gold is not read


@pytest.mark.shared_data
def test_triviaqa_rows_and_exclusions(shared_data: Path, tmp_path: Path) -> None:
    path = str(shared_data / "triviaqa/topics.dpr.trivia.test.txt")
    cfg = CohortConfig(source="triviaqa-dpr", path=path, size=10, seed=0)
    plain = select(cfg, tmp_path)
    assert plain["n_candidates"] == 11313
    first = plain["questions"][0]["question_id"]
    (tmp_path / "dev.txt").write_text(f"# development ids\n{first}\n")
    cfg2 = CohortConfig(source="triviaqa-dpr", path=path, size=10, seed=0, exclude="dev.txt")
    excluded = select(cfg2, tmp_path)
    ids = [q["question_id"] for q in excluded["questions"]]
    assert first not in ids
    assert ids[:9] == [q["question_id"] for q in plain["questions"][1:]]
    rows = Path(path).read_text().splitlines()
    assert rows[0].startswith("Who was the man behind The Chipmunks?")
    q0 = next((q for q in plain["questions"] if q["question_id"] == "0"), None)
    assert q0 is None or q0["question"] == "Who was the man behind The Chipmunks?"


@pytest.mark.shared_data
def test_cohort_larger_than_source(shared_data: Path) -> None:
    cfg = CohortConfig(source="nq-open", path="nq_open/NQ-open.dev.jsonl", size=4000)
    with pytest.raises(InputError, match="cohort size 4000 is larger than the 3610"):
        select(cfg, shared_data)


def test_csv_source_and_manifest_hash_check(tmp_path: Path) -> None:
    (tmp_path / "q.csv").write_text("qid,text\na,first?\nb,second?\nc,third?\n")
    cfg = CohortConfig(source="csv", path="q.csv", size=3, id_field="qid",
                       question_field="text")
    manifest = select(cfg, tmp_path)
    assert sorted(q["question_id"] for q in manifest["questions"]) == ["a", "b", "c"]
    path = tmp_path / "cohort.json"
    write_manifest(path, manifest)
    assert [q.question for q in read_manifest(path)] == [
        q["question"] for q in manifest["questions"]]
    path.write_text(path.read_text().replace("first?", "FIRST?"))
    with pytest.raises(IntegrityError, match="text changed"):
        read_manifest(path)


def test_duplicate_ids_and_missing_fields(tmp_path: Path) -> None:
    (tmp_path / "d.jsonl").write_text('{"id": 1, "question": "x"}\n{"id": 1, "question": "y"}\n')
    with pytest.raises(InputError, match="duplicate question id '1'"):
        select(CohortConfig(source="jsonl", path="d.jsonl", size=1), tmp_path)
    (tmp_path / "m.jsonl").write_text('{"id": 1}\n')
    with pytest.raises(InputError, match=r"m\.jsonl:1: missing string field 'question'"):
        select(CohortConfig(source="jsonl", path="m.jsonl", size=1), tmp_path)
