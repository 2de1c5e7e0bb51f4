"""An attributed testbed run exports and verifies with no network; a tampered attribution
label or verdict is refused, naming what changed."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from snapaudit.artifact.export import claims, export_artifact
from snapaudit.artifact.verify import verify_artifact
from snapaudit.errors import VerificationError
from snapaudit.progress import SilentProgress
from snapaudit.run.after.attribution_run import attribute_run
from snapaudit.run.engine import run_protocol_file
from snapaudit.stats.attribution import CAUSED
from tests.fakes.llm_server import FakeLLMServer
from tests.helpers.attribution import attribution_protocol, attribution_world, evidence_responder

JUDGE_CELLS = "ledger/attribution_judge_rule.cells.jsonl"


@pytest.fixture(scope="module")
def attributed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Path, str]]:
    tmp = tmp_path_factory.mktemp("attributed")
    corpus, planted = attribution_world(tmp)
    with FakeLLMServer(responder=evidence_responder) as srv:
        proto = attribution_protocol(tmp, corpus, srv.openai_base_url,
                                     'kind = "rule"\nname = "rule"')
        run_protocol_file(proto, tmp / "run", [], SilentProgress())
        attribute_run(tmp / "run", SilentProgress())
    yield tmp / "run", export_artifact(tmp / "run", tmp / "artifact"), planted


def _copy(artifact: Path, tmp_path: Path) -> Path:
    return Path(shutil.copytree(artifact, tmp_path / "copy"))


def _rehash(root: Path) -> None:
    """What a careful forger does: update the manifest after editing a file."""
    from snapaudit.hashing import sha256_file

    manifest = json.loads((root / "manifest.json").read_text())
    manifest["files"] = {f: sha256_file(root / f) for f in manifest["files"]}
    (root / "manifest.json").write_text(json.dumps(manifest))


@pytest.mark.slow
def test_an_attributed_run_exports_its_cells_and_verifies(
        attributed: tuple[Path, Path, str]) -> None:
    _, artifact, planted = attributed
    results = json.loads((artifact / "results.json").read_text())
    assert results["attribution"]["questions"]["q0"]["caused"] == [planted]
    assert results["attribution"]["questions"]["q0"]["verdict"] == CAUSED
    stages = [rec["stage"] for rec, _ in json.loads((artifact / "locks.json").read_text())]
    assert stages[-1] == "attribution"
    answered = (artifact / "ledger/attribution.cells.jsonl").read_text().splitlines()
    assert len(answered) == 4 and len((artifact / JUDGE_CELLS).read_text().splitlines()) == 2
    report = verify_artifact(artifact)
    attribution_claims = [c for c in claims(results) if c["claim"].startswith("attribution.")]
    assert attribution_claims and report.checked >= len(attribution_claims)
    assert not report.failures


@pytest.mark.slow
def test_a_tampered_attribution_label_is_refused(attributed: tuple[Path, Path, str],
                                                 tmp_path: Path) -> None:
    root = _copy(attributed[1], tmp_path)
    path = root / JUDGE_CELLS
    cells = [json.loads(line) for line in path.read_text().splitlines()]
    for label in cells[0]["payload"]["labels"]:
        label["same"] = not label["same"]
    path.write_text("".join(json.dumps(c) + "\n" for c in cells))
    _rehash(root)
    with pytest.raises(VerificationError) as err:
        verify_artifact(root)
    assert "locks: attribution lock: ledger content 'judge_accepted_sha256' changed" in str(
        err.value)
    # the verdict no longer follows from the labels either
    assert "attribution: question q0: stated verdict 'caused'" in str(err.value)


@pytest.mark.slow
def test_a_forged_verdict_with_forged_claims_is_refused(attributed: tuple[Path, Path, str],
                                                        tmp_path: Path) -> None:
    root = _copy(attributed[1], tmp_path)
    results = json.loads((root / "results.json").read_text())
    row = results["attribution"]["questions"]["q0"]
    row["verdict"], row["caused"] = "not explained by evidence", []
    (root / "results.json").write_text(json.dumps(results))
    (root / "claims.json").write_text(json.dumps(claims(results)))
    _rehash(root)
    with pytest.raises(VerificationError) as err:
        verify_artifact(root)
    assert ("attribution: question q0: stated verdict 'not explained by evidence', "
            "recomputed 'caused'") in str(err.value)
    assert "claim attribution.questions.q0.caused: stated [], recomputed" in str(err.value)
