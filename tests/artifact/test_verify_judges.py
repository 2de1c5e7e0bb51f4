"""`verify` after `judge-audit` with a judge that disagrees, and `verify RUN_DIR` (issue #12)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from aiohttp import web

from snapaudit.artifact.export import export_artifact
from snapaudit.artifact.verify import verify_artifact
from snapaudit.cli import main
from snapaudit.errors import VerificationError
from snapaudit.judge.spec import parse_judge_spec
from snapaudit.progress import SilentProgress
from snapaudit.run.after.judge_audit_run import judge_audit
from snapaudit.tables import read_labels
from tests.fakes.judge_server import FakeJudgeServer
from tests.fakes.loopback import LoopbackServer


class AllSameJudge(LoopbackServer):
    """An OpenAI-compatible judge that calls every pair the same: it disagrees with the
    rule judge on every pair the rule judge calls different."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = FakeJudgeServer(lambda answer: "one cluster")

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self.inner._handle)


@pytest.fixture(scope="module")
def audited(finished_run: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    run = tmp_path_factory.mktemp("audited") / "run"
    shutil.copytree(finished_run, run)
    with AllSameJudge() as server:
        spec = f"allsame=openai:m@http://127.0.0.1:{server.port}/v1"
        outcome = judge_audit(run, parse_judge_spec(spec), 4, SilentProgress())
    assert outcome.results_path is not None
    assert outcome.agreement.agreement < 100.0  # the planted disagreement
    return run


def test_verify_passes_after_an_audit_by_a_disagreeing_judge(audited: Path,
                                                              tmp_path: Path) -> None:
    labels = read_labels(audited / "tables" / "labels.jsonl")
    assert {lab.judge for lab in labels} == {"rule", "allsame"}
    art = export_artifact(audited, tmp_path / "art")
    assert verify_artifact(art).checked > 20


def test_verify_names_the_judge_whose_labels_were_altered(audited: Path,
                                                          tmp_path: Path) -> None:
    art = export_artifact(audited, tmp_path / "art")
    path = art / "tables" / "labels.jsonl"
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    first = next(i for i, r in enumerate(rows) if r["judge"] == "allsame")
    rows[first]["same"] = not rows[first]["same"]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    manifest = json.loads((art / "manifest.json").read_text())
    from snapaudit.hashing import sha256_file

    manifest["files"] = {f: sha256_file(art / f) for f in manifest["files"]}
    (art / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(VerificationError) as info:
        verify_artifact(art)
    assert "labels of judge 'allsame' differ from that judge's ledger cells" in str(info.value)
    assert "judge 'rule'" not in str(info.value)


def test_verify_on_a_run_directory_is_a_usage_error(finished_run: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["verify", str(finished_run)])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "is a run directory, not an artifact" in err
    assert f"snapaudit export {finished_run} --out ARTIFACT" in err


def test_nq_normalizer_names_its_source() -> None:
    from snapaudit.stats import normalize

    root = Path(__file__).resolve().parents[2]
    for text in (normalize.__doc__ or "", (root / "docs" / "analysis.md").read_text()):
        assert "orqa/utils/eval_utils.py" in text
        assert "SQuAD" in text and "NFD" in text
    # where EM differs from SQuAD/DPR: canonically equivalent strings in different forms
    assert normalize.normalize_nq("caf\u00e9") == normalize.normalize_nq("cafe\u0301")
