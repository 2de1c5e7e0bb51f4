"""``snapaudit run --dry-run``: calls per stage, token estimates and cost, no call made."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from snapaudit.cli import cli
from snapaudit.errors import ConfigError
from snapaudit.run.after.dryrun import plan
from snapaudit.run.record.protocol import load_protocol
from tests.fakes.rag_service import FakeRagService
from tests.helpers.protocol import LLM_JUDGE, protocol_text, write_world

PRICING = '''
[run.pricing.judge-model]
input_per_mtok = 0.0
output_per_mtok = 1.0
batch_discount = 0.5
'''


def test_dry_run_counts_calls_tokens_and_cost(tmp_path: Path) -> None:
    write_world(tmp_path, n=12)
    svc = FakeRagService()  # never started: a dry run calls nothing
    path = tmp_path / "protocol.toml"
    path.write_text(protocol_text(svc, size=8, judge=LLM_JUDGE) + PRICING, encoding="utf-8")
    stages = {s.stage: s for s in plan(load_protocol(path), tmp_path)}
    assert stages["answers"].calls == 8 * 2 * 2          # questions x states x repeats
    judge = stages["judge"]
    assert judge.calls == 8                              # one packet per question
    assert judge.completion_tokens == 8 * (64 + 24 * 6)  # 4 answers: 6 pairs per packet
    assert judge.prompt_tokens > 8 * 100                 # the rendered packets
    assert judge.cost_usd == 8 * 208 / 1e6               # output tokens at 1 USD per million
    assert judge.batch_cost_usd == 8 * 208 / 1e6 / 2
    result = CliRunner().invoke(cli, ["run", str(path), "--run-dir", str(tmp_path / "r"),
                                      "--dry-run"])
    assert result.exit_code == 0, result.output
    assert "judge" in result.output and "0.0017" in result.output
    assert not (tmp_path / "r").exists()                 # nothing written


def test_dry_run_says_an_auto_dialect_would_be_probed(tmp_path: Path) -> None:
    write_world(tmp_path, n=12)
    svc = FakeRagService()  # never started: the probe is not made by a dry run
    path = tmp_path / "protocol.toml"
    path.write_text(protocol_text(svc, size=8, judge=LLM_JUDGE + '\nresponse_format = "auto"'),
                    encoding="utf-8")
    result = CliRunner().invoke(cli, ["run", str(path), "--run-dir", str(tmp_path / "r"),
                                      "--dry-run"])
    assert result.exit_code == 0, result.output
    assert ('judge.generator.response_format = "auto": a fresh run probes '
            "http://127.0.0.1:9/v1 (model judge-model)") in result.output
    assert not (tmp_path / "r").exists()


def test_a_dry_run_with_limit_counts_the_smoke_run(tmp_path: Path) -> None:
    write_world(tmp_path, n=12)
    path = tmp_path / "protocol.toml"
    path.write_text(protocol_text(FakeRagService(), size=8), encoding="utf-8")
    run = ["run", str(path), "--run-dir", str(tmp_path / "r"), "--dry-run"]
    full = CliRunner().invoke(cli, run)
    smoke = CliRunner().invoke(cli, [*run, "--limit", "3"])
    assert full.exit_code == 0 and smoke.exit_code == 0, smoke.output
    assert " 32 " in full.output.replace("\n", " ")  # 8 questions x 2 states x 2 repeats
    assert " 12 " in smoke.output.replace("\n", " ")  # 3 x 2 x 2
    too_many = CliRunner().invoke(cli, [*run, "--limit", "9"])
    assert isinstance(too_many.exception, ConfigError)  # main() makes it one line and exit 2
    assert str(too_many.exception) == "--limit 9 is larger than cohort.size = 8"
    assert not (tmp_path / "r").exists()
