"""``snapaudit judge-audit`` on a run directory, and judge specs on the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from snapaudit.cli.judge_audit import command
from snapaudit.errors import ConfigError
from snapaudit.judge.spec import parse_judge_spec
from snapaudit.tables import write_answers, write_labels
from tests.helpers.judging import grid_answers, grid_labels

PROTOCOL = """
name = "audit-test"
[states]
order = ["old", "new"]
old = "old"
new = "new"
[design]
seed = 3
[cohort]
source = "jsonl"
path = "questions.jsonl"
size = 10
[gold]
path = "gold.jsonl"
[systems.old]
url = "http://127.0.0.1:9/old"
[systems.new]
url = "http://127.0.0.1:9/new"
[judge]
kind = "labels"
name = "primary"
labels_path = "labels.jsonl"
[bootstrap]
draws = 500
"""


def _run_dir(tmp_path: Path) -> Path:
    (tmp_path / "protocol.resolved.toml").write_text(PROTOCOL)
    (tmp_path / "tables").mkdir()
    write_answers(tmp_path / "tables" / "answers.jsonl", grid_answers())
    write_labels(tmp_path / "tables" / "labels.jsonl", grid_labels())
    return tmp_path


def test_cli_audit_with_the_rule_judge(tmp_path: Path) -> None:
    run_dir = _run_dir(tmp_path)
    result = CliRunner().invoke(command, [str(run_dir), "--judge", "rule2=rule",
                                          "--sample", "10", "--progress", "silent"])
    assert result.exit_code == 0, result.output
    assert "agreement 86.7%" in result.output
    assert "semantic D under rule2: +60.00 pp" in result.output
    body = json.loads((run_dir / "judge-audit" / "rule2.json").read_text())
    assert body["pairs"] == 60 and body["judge"]["kind"] == "rule"
    assert body["kappa"] == pytest.approx(12 / 17)


def test_cli_audit_needs_the_semantic_tables(tmp_path: Path) -> None:
    (tmp_path / "protocol.resolved.toml").write_text(PROTOCOL)
    result = CliRunner().invoke(command, [str(tmp_path), "--judge", "rule",
                                          "--progress", "silent"])
    assert result.exit_code != 0


def test_judge_specs(tmp_path: Path) -> None:
    assert parse_judge_spec("rule").kind == "rule"
    assert parse_judge_spec("rule+minilm@0.8").rule_embedding_threshold == 0.8
    cfg = parse_judge_spec("gpt=openai:gpt-4o-mini@http://127.0.0.1:8000/v1")
    assert cfg.name == "gpt" and cfg.generator is not None
    assert cfg.generator.model == "gpt-4o-mini"
    assert cfg.generator.base_url == "http://127.0.0.1:8000/v1"
    assert parse_judge_spec("local:SmolLM2").generator.backend == "local"  # type: ignore[union-attr]
    toml = tmp_path / "j.toml"
    toml.write_text('[judge]\nkind = "rule"\nname = "r"\n')
    assert parse_judge_spec(str(toml)).name == "r"
    for bad in ("nope", "openai:", "ftp:model"):
        with pytest.raises(ConfigError):
            parse_judge_spec(bad)
    toml.write_text('[judge]\nkind = "none"\n')
    with pytest.raises(ConfigError):
        parse_judge_spec(str(toml))
