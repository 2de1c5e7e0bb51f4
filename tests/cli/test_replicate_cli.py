"""``snapaudit replicate`` on a synthetic testbed run directory (locked evidence in the ledger)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from snapaudit.cli.replicate import command
from snapaudit.run.ledger import Ledger
from snapaudit.tables import write_answers, write_labels
from tests.fakes.llm_server import FakeLLMServer
from tests.run.test_replicate import QIDS, _evidence, _original, responder

PROTOCOL = """
name = "replicate-test"
[states]
order = ["old", "mid", "new"]
old = "old"
new = "new"
[design]
seed = 1
[cohort]
source = "jsonl"
path = "questions.jsonl"
size = 4
[gold]
path = "gold.jsonl"
[system]
kind = "testbed"
[testbed]
corpus = "corpus"
states = {old = 1, mid = 2, new = 3}
[judge]
kind = "rule"
name = "judge"
[bootstrap]
draws = 500
[run]
backoff_base_s = 0.0
backoff_max_s = 0.0
"""


def _run_dir(tmp_path: Path) -> Path:
    (tmp_path / "protocol.resolved.toml").write_text(PROTOCOL)
    (tmp_path / "tables").mkdir()
    rows, labels = _original()
    write_answers(tmp_path / "tables" / "answers.jsonl", rows)
    write_labels(tmp_path / "tables" / "labels.jsonl", labels)
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        for (qid, state), ev in _evidence().items():
            assert ev is not None
            key = f"{qid}|{state}|p1"
            aid = ledger.begin_attempt("retrieval", key, "h")
            ledger.finish_and_accept("retrieval", key, aid, {"evidence": {
                "doc_ids": list(ev.doc_ids), "rendered": ev.rendered}})
    return tmp_path


def test_cli_replicate(tmp_path: Path) -> None:
    run_dir = _run_dir(tmp_path)
    with FakeLLMServer(responder=responder) as server:
        spec = f"openai:second@{server.openai_base_url}"
        result = CliRunner().invoke(command, [str(run_dir), "--generator", spec, "--sample",
                                              "4", "--states", "old,new",
                                              "--progress", "silent"])
    assert result.exit_code == 0, result.output
    assert "semantic: D +50.00 pp (original +0.00 pp), paired difference +50.00 pp" \
        in result.output
    assert "strict flips: 2 (original 0)" in result.output
    assert "packet scopes differ" in result.output
    body = json.loads((run_dir / "replicate" / "openai-second.json").read_text())
    assert body["questions"] == QIDS and body["states"] == ["old", "new"]


def test_cli_replicate_rejects_bad_states(tmp_path: Path) -> None:
    run_dir = _run_dir(tmp_path)
    result = CliRunner().invoke(command, [str(run_dir), "--generator", "local:x",
                                          "--states", "old", "--progress", "silent"])
    assert result.exit_code != 0
