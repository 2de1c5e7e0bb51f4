"""Export then verify: passes on a real locked run; any altered cell makes it fail."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from snapaudit.artifact.export import claims, export_artifact, sanitize
from snapaudit.artifact.verify import verify_artifact
from snapaudit.cli import main
from snapaudit.errors import VerificationError
from snapaudit.hashing import sha256_file, sha256_text


@pytest.fixture(scope="session")
def artifact(finished_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_artifact(finished_run, tmp_path_factory.mktemp("art") / "artifact")


def _copy(artifact: Path, tmp_path: Path) -> Path:
    dest = tmp_path / "copy"
    shutil.copytree(artifact, dest)
    return dest


def _rehash(root: Path) -> None:
    """What a careful forger does: update the manifest after editing a file."""
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["files"] = {f: sha256_file(root / f) for f in manifest["files"]}
    (root / "manifest.json").write_text(json.dumps(manifest))


def test_export_then_verify_passes(artifact: Path, finished_run: Path) -> None:
    report = verify_artifact(artifact)
    assert report.checked > 20 and report.skipped  # gold claims wait for --gold
    assert all(s.split(".")[0] in ("utility", "transitions", "flip_rates")
               for s in report.skipped)
    gold = finished_run.parent / "world" / "gold.jsonl"
    full = verify_artifact(artifact, gold)
    assert not full.skipped and full.checked == report.checked + len(report.skipped)
    # the schema-2 statistics are claims the verifier recomputed
    stated = {c["claim"] for c in json.loads((artifact / "claims.json").read_text())}
    assert {"flip_rates.nfr.point", "utility.delta.em.p_nonpositive",
            "distribution_test.exact.p_value", "overlap.mean_docs"} <= stated


def test_artifact_has_no_question_text_or_gold(artifact: Path, finished_run: Path) -> None:
    world = finished_run.parent / "world"
    lines = (world / "questions.jsonl").read_text().splitlines()
    questions = [json.loads(x)["question"] for x in lines]
    text = "".join(p.read_text() for p in artifact.rglob("*") if p.is_file())
    assert not any(q in text for q in questions)
    assert sha256_text(questions[0]) in text
    assert not (artifact / "tables" / "gold.jsonl").exists()


def test_sanitize_hashes_sensitive_keys_only() -> None:
    out = sanitize({"question": "Who?", "answer": "Ann", "x": [{"rendered": "doc"}]})
    assert out == {"question": {"sha256": sha256_text("Who?")}, "answer": "Ann",
                   "x": [{"rendered": {"sha256": sha256_text("doc")}}]}


def test_claims_are_every_number_of_the_results() -> None:
    got = claims({"kernels": {"exact": {"d_hat": 1.5, "ci95": [0.0, 3.0]}},
                  "utility": {"em_delta": -1.0}, "gate": {"rules": [{"value": 2.0}]},
                  "comparison": {"old": "n1"}})
    assert got == [{"claim": "gate.rules[0].value", "value": 2.0, "needs_gold": False},
                   {"claim": "kernels.exact.ci95", "value": [0.0, 3.0], "needs_gold": False},
                   {"claim": "kernels.exact.d_hat", "value": 1.5, "needs_gold": False},
                   {"claim": "utility.em_delta", "value": -1.0, "needs_gold": True}]


def _files(root: Path) -> list[str]:
    manifest = json.loads((root / "manifest.json").read_text())
    return sorted(manifest["files"])


def test_every_file_is_covered(artifact: Path) -> None:
    names = _files(artifact)
    assert {"results.json", "claims.json", "locks.json", "tables/answers.jsonl",
            "ledger/answer.cells.jsonl", "ledger/answer.attempts.jsonl"} <= set(names)


@pytest.mark.parametrize("name", ["results.json", "claims.json", "locks.json",
                                  "tables/answers.jsonl", "tables/labels.jsonl",
                                  "ledger/answer.cells.jsonl", "ledger/answer.attempts.jsonl",
                                  "ledger/judge_rule.cells.jsonl", "cohort.json",
                                  "protocol.json", "gold.sha256.json"])
def test_altering_any_file_fails_naming_it(artifact: Path, tmp_path: Path, name: str) -> None:
    root = _copy(artifact, tmp_path)
    path = root / name
    path.write_text(path.read_text().replace("1", "2", 1))
    with pytest.raises(VerificationError) as err:
        verify_artifact(root)
    assert f"file {name}: content differs" in str(err.value)


def test_altered_answer_cell_with_forged_manifest_fails(artifact: Path, tmp_path: Path) -> None:
    root = _copy(artifact, tmp_path)
    path = root / "tables" / "answers.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows[3]["answer"] = "something else"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _rehash(root)
    with pytest.raises(VerificationError) as err:
        verify_artifact(root)
    row = rows[3]
    assert (f"tables/answers.jsonl: row {row['question_id']}/{row['state']}/{row['repeat']} "
            "differs from the answer ledger") in str(err.value)


def test_altered_ledger_cell_with_forged_manifest_breaks_the_lock(artifact: Path,
                                                                   tmp_path: Path) -> None:
    root = _copy(artifact, tmp_path)
    path = root / "ledger" / "answer.cells.jsonl"
    lines = path.read_text().splitlines()
    cell = json.loads(lines[0])
    cell["payload"]["answer"] = "forged"
    lines[0] = json.dumps(cell)
    path.write_text("\n".join(lines) + "\n")
    _rehash(root)
    with pytest.raises(VerificationError) as err:
        verify_artifact(root)
    assert "locks: answer lock: ledger content 'accepted_sha256' changed" in str(err.value)


def test_altered_claim_is_named(artifact: Path, tmp_path: Path) -> None:
    root = _copy(artifact, tmp_path)
    for name in ("results.json", "claims.json"):
        text = (root / name).read_text()
        data = json.loads(text)
        if name == "results.json":
            data["kernels"]["semantic"]["d_hat"] += 1.0
        else:
            for c in data:
                if c["claim"] == "kernels.semantic.d_hat":
                    c["value"] += 1.0
        (root / name).write_text(json.dumps(data))
    _rehash(root)
    with pytest.raises(VerificationError) as err:
        verify_artifact(root)
    assert "claim kernels.semantic.d_hat: stated" in str(err.value)


def test_wrong_gold_is_named(artifact: Path, finished_run: Path, tmp_path: Path) -> None:
    gold = finished_run.parent / "world" / "gold.jsonl"
    bad = tmp_path / "gold.jsonl"
    lines = gold.read_text().splitlines()
    first = json.loads(lines[0])
    first["answers"] = ["nobody"]
    bad.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n")
    with pytest.raises(VerificationError) as err:
        verify_artifact(artifact, bad)
    assert f"gold: aliases of {first['question_id']} differ" in str(err.value)
    assert "gold lock: ledger content 'gold_sha256' changed" in str(err.value)


def test_cli_exit_codes(artifact: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
                        ) -> None:
    main(["verify", str(artifact)])
    assert "claims reproduce" in capsys.readouterr().out
    root = _copy(artifact, tmp_path)
    (root / "results.json").write_text("{}")
    with pytest.raises(SystemExit) as exc:
        main(["verify", str(root)])
    assert exc.value.code == 3
    assert "file results.json: content differs" in capsys.readouterr().err


def test_cli_report_and_export(finished_run: Path, tmp_path: Path,
                               capsys: pytest.CaptureFixture[str]) -> None:
    main(["report", str(finished_run), "--out", str(tmp_path / "rep")])
    out = capsys.readouterr().out
    assert "INCOMPATIBLE" in out and (tmp_path / "rep" / "report.html").exists()
    main(["export", str(finished_run), "--out", str(tmp_path / "art")])
    assert "snapaudit verify" in capsys.readouterr().out
    assert verify_artifact(tmp_path / "art").checked > 20


def test_run_without_ledger_exports_and_verifies(finished_run: Path, tmp_path: Path) -> None:
    run = tmp_path / "analyzed"
    shutil.copytree(finished_run / "tables", run / "tables")
    shutil.copyfile(finished_run / "results.json", run / "results.json")
    report = verify_artifact(export_artifact(run, tmp_path / "art"))
    assert report.checked > 20
    assert "no ledger cells in the artifact; tables checked by claims only" in report.notes
