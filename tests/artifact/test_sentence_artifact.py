"""The verifier recomputes the contains-gold rates, the answers' length and the changed
documents of a run whose system reported document texts (tests/fakes/sentence_pipeline)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from snapaudit.artifact.export import export_artifact
from snapaudit.artifact.verify import verify_artifact
from snapaudit.errors import VerificationError
from snapaudit.hashing import sha256_file
from tests.fakes.sentence_pipeline import write_world
from tests.helpers.cli import exit_code
from tests.helpers.protocol import python_protocol_text, save_protocol

TARGET = 'target = "tests.fakes.sentence_pipeline:answer"\nkwargs = {{ index = "{}" }}'


@pytest.fixture(scope="module")
def sentence_artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("sentences")
    write_world(tmp)
    proto = save_protocol(tmp, python_protocol_text(TARGET.format("v1"), TARGET.format("v2"),
                                                    run={"concurrency": 1}))
    assert exit_code(["run", str(proto), "--run-dir", str(tmp / "run"),
                      "--progress", "silent"]) == 0
    return export_artifact(tmp / "run", tmp / "artifact")


def _forge(artifact: Path, tmp_path: Path, edit: str, claim: str, value: float) -> Path:
    root = tmp_path / "copy"
    shutil.copytree(artifact, root)
    results = json.loads((root / "results.json").read_text())
    section, key = edit.split(".", 1)
    target = results[section]
    *path, last = key.split(".")
    for part in path:
        target = target[part]
    target[last] = value
    (root / "results.json").write_text(json.dumps(results))
    claims = json.loads((root / "claims.json").read_text())
    for c in claims:
        if c["claim"] == claim:
            c["value"] = value
    (root / "claims.json").write_text(json.dumps(claims))
    _rehash(root)
    return root


def _rehash(root: Path) -> None:
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["files"] = {f: sha256_file(root / f) for f in manifest["files"]}
    (root / "manifest.json").write_text(json.dumps(manifest))


def test_the_new_numbers_are_claims_that_reproduce(sentence_artifact: Path) -> None:
    gold = sentence_artifact.parent / "gold.jsonl"
    report = verify_artifact(sentence_artifact, gold)
    assert not report.skipped
    claims = {c["claim"]: c["value"]
              for c in json.loads((sentence_artifact / "claims.json").read_text())}
    assert claims["utility.old.contains"] == 100.0
    assert claims["utility.contains_delta"] == pytest.approx(-400 / 12)
    assert (claims["overlap.changed"], claims["comparison.answer_words"]) == (2, 6.0)
    rows = [json.loads(x) for x in
            (sentence_artifact / "tables" / "answers.jsonl").read_text().splitlines()]
    assert all(len(r["doc_hashes"]) == 1 for r in rows)  # hashes, never the texts
    assert "headquarters in" not in (sentence_artifact / "tables" / "answers.jsonl").read_text()


@pytest.mark.parametrize(("edit", "claim", "value"), [
    ("utility.new.contains", "utility.new.contains", 100.0),
    ("overlap.changed", "overlap.changed", 0),
    ("comparison.answer_words", "comparison.answer_words", 2.0)])
def test_a_forged_number_is_named(sentence_artifact: Path, tmp_path: Path, edit: str,
                                  claim: str, value: float) -> None:
    root = _forge(sentence_artifact, tmp_path, edit, claim, value)
    with pytest.raises(VerificationError) as err:
        verify_artifact(root, sentence_artifact.parent / "gold.jsonl")
    assert f"claim {claim}: stated {value!r}" in str(err.value)


def test_a_forged_content_hash_in_the_table_is_named(sentence_artifact: Path,
                                                     tmp_path: Path) -> None:
    root = tmp_path / "copy"
    shutil.copytree(sentence_artifact, root)
    path = root / "tables" / "answers.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows[0]["doc_hashes"] = ["0" * 64]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _rehash(root)
    with pytest.raises(VerificationError) as err:
        verify_artifact(root)
    assert (f"tables/answers.jsonl: row {rows[0]['question_id']}/{rows[0]['state']}/"
            f"{rows[0]['repeat']} differs from the answer ledger") in str(err.value)
