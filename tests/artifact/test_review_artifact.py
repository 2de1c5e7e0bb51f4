"""export carries the review; verify recomputes it offline and refuses a tampered one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from snapaudit.artifact.export import export_artifact
from snapaudit.artifact.verify import verify_artifact
from snapaudit.errors import VerificationError
from snapaudit.hashing import sha256_file
from snapaudit.progress import SilentProgress
from snapaudit.run.after.review import ReviewSession
from snapaudit.run.engine import reanalyze
from snapaudit.run.record.review_store import DecisionRow
from tests.helpers.review import build_review_run


@pytest.fixture(scope="module")
def artifact(tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = build_review_run(tmp_path_factory.mktemp("review"))
    with ReviewSession.open(run, "alice", sample=3) as a, \
            ReviewSession.open(run, "bob", sample=3) as b:
        for item in a.label_items():
            a.save_labels(item.question_id, dict.fromkeys(item.pairs, "same"))
            b.save_labels(item.question_id, {p: ("unsure" if p == "A|B" else "different")
                                             for p in item.pairs})
        a.finish_labels()
        b.finish_labels()
        first, second = a.change_items()[:2]
        a.save_decision(first.question_id, "regression", "lost the fact", first.shown_sha256)
        b.save_decision(second.question_id, "improvement", "", second.shown_sha256)
    reanalyze(run, SilentProgress())
    return export_artifact(run, tmp_path_factory.mktemp("art") / "artifact")


def _copy(artifact: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(artifact, tmp_path / "copy"))


def _rehash(root: Path) -> None:
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["files"] = {f: sha256_file(root / f) for f in manifest["files"]}
    (root / "manifest.json").write_text(json.dumps(manifest))


def _rows(root: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (root / "review" / "decisions.jsonl").read_text()
            .splitlines()]


def _write_rows(root: Path, rows: list[dict[str, Any]], rechain: bool) -> None:
    if rechain:  # a careful forger rebuilds the hash chain too
        prev = None
        for row in rows:
            typed = DecisionRow.from_json({**row, "prev_sha256": prev})
            row.update(prev_sha256=prev, row_sha256=typed.expected_hash())
            prev = row["row_sha256"]
    (root / "review" / "decisions.jsonl").write_text("".join(json.dumps(r) + "\n"
                                                             for r in rows))
    _rehash(root)


def _failures(root: Path) -> str:
    with pytest.raises(VerificationError) as err:
        verify_artifact(root)
    return str(err.value)


def test_the_review_exports_and_verifies(artifact: Path) -> None:
    results = json.loads((artifact / "results.json").read_text())
    assert results["review"]["regressions"] == 1 and len(_rows(artifact)) == 2
    assert sorted(results["judges"]["human"]["judges"]) == ["human:alice", "human:bob"]
    assert (artifact / "ledger" / "human_alice.cells.jsonl").exists()
    claims = json.loads((artifact / "claims.json").read_text())
    assert any(c["claim"].startswith("judges.human.judges.human:bob.vs_primary.kappa")
               for c in claims)
    report = verify_artifact(artifact)
    assert report.checked > 0 and not report.failures


def test_an_edited_decision_is_refused(artifact: Path, tmp_path: Path) -> None:
    root = _copy(artifact, tmp_path)
    rows = _rows(root)
    rows[0]["decision"] = "neutral"
    _write_rows(root, rows, rechain=False)
    assert "review decision #1 (alice" in _failures(root)
    _write_rows(root, rows, rechain=True)
    assert "results.json review: differs from the review recomputed" in _failures(root)


def test_a_decision_claiming_other_answers_is_refused(artifact: Path, tmp_path: Path) -> None:
    root = _copy(artifact, tmp_path)
    rows = _rows(root)
    rows[1]["gold_shown"] = not rows[1]["gold_shown"]
    _write_rows(root, rows, rechain=True)
    assert "review decision #2 (bob" in _failures(root)
    assert "what it says was shown is not the locked answers" in _failures(root)


def test_an_edited_human_label_is_refused(artifact: Path, tmp_path: Path) -> None:
    root = _copy(artifact, tmp_path)
    path = root / "ledger" / "human_bob.cells.jsonl"
    cells = [json.loads(x) for x in path.read_text().splitlines()]
    cells[0]["payload"]["labels"][0]["label"] = "same"
    path.write_text("".join(json.dumps(c) + "\n" for c in cells))
    _rehash(root)
    out = _failures(root)
    assert "review: the labels of human:bob differ from their lock" in out
