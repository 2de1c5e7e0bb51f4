"""``snapaudit replicate`` on a synthetic testbed run directory (locked evidence in the ledger)."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from snapaudit.cli.replicate import command
from tests.fakes.llm_server import FakeLLMServer
from tests.helpers.judging import QIDS, replicate_dir, responder


def test_cli_replicate(tmp_path: Path) -> None:
    run_dir = replicate_dir(tmp_path)
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
    run_dir = replicate_dir(tmp_path)
    result = CliRunner().invoke(command, [str(run_dir), "--generator", "local:x",
                                          "--states", "old", "--progress", "silent"])
    assert result.exit_code != 0
