"""Second-generator replication on locked evidence, judged blind, paired with the original."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from snapaudit.errors import LockError
from snapaudit.judge.config import JudgeConfig
from snapaudit.judge.rule import RuleJudge
from snapaudit.progress import choose_progress
from snapaudit.run.execution.runner import RetryPolicy
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.stages.replicate import (
    Replication,
    ReplicationPlan,
    replication_sample,
    run_replication,
)
from snapaudit.testbed.generate.config import generator_config
from snapaudit.testbed.system import TestbedSystem
from tests.fakes.llm_server import FakeLLMServer
from tests.helpers.judging import QIDS, locked_evidence, original_tables, responder


def _no_sources(pass_no: int) -> object:
    raise LockError("no retrieval in this test")


def _replicate(tmp_path: Path, url: str) -> tuple[Replication, list[str]]:
    gen = generator_config(backend="openai", base_url=url, model="second", temperature=0.0)
    plan = ReplicationPlan("second", "old", "new", sample=4, seed=1, draws=500,
                           original_judge="judge", original_scope="all")
    rows, labels = original_tables()
    policy = RetryPolicy(concurrency=2, backoff_base_s=0.0, backoff_max_s=0.0)
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        result = asyncio.run(run_replication(
            ledger, rows, labels, {q: "Which city?" for q in QIDS}, locked_evidence(),
            lambda s: TestbedSystem(s, gen, _no_sources),  # type: ignore[arg-type]
            RuleJudge(JudgeConfig(kind="rule", name="rule")), plan, policy,
            choose_progress("silent"), gold={q: ("Paris",) for q in QIDS}))
        stages = sorted({a.stage for a in ledger.attempts()})
    return result, stages


def test_replication_reports_d_flips_and_the_paired_difference(tmp_path: Path) -> None:
    with FakeLLMServer(responder=responder) as server:
        result, stages = _replicate(tmp_path, server.openai_base_url)
        users = [call.user for call in server.calls]
    assert stages == ["replicate:second:answer", "replicate:second:judge:rule"]
    assert len(users) == 4 * 2 * 2  # questions x states x repeats
    assert all("<evidence>" in u for u in users)
    assert result.question_ids == tuple(QIDS)
    assert result.original.kernels["semantic"].d_hat == pytest.approx(0.0)
    assert result.replicated.kernels["semantic"].d_hat == pytest.approx(50.0)  # pp
    rep_d = result.replicated.per_question["semantic"].d
    assert list(rep_d) == [1.0, 1.0, 0.0, 0.0]
    assert result.replicated.flips.count == 2
    assert result.paired["semantic"].point == pytest.approx(50.0)
    assert result.paired["exact"].point == pytest.approx(50.0)
    assert result.scope_note is not None and "descriptive" in result.scope_note
    body = result.to_json()
    assert body["paired_difference_pp"]["semantic"]["point"] == pytest.approx(50.0)


def test_replication_sample_is_seeded_and_nested() -> None:
    ids = [f"q{i}" for i in range(40)]
    assert replication_sample(ids, 5, 1) == replication_sample(list(reversed(ids)), 5, 1)
    assert set(replication_sample(ids, 3, 1)) <= set(replication_sample(ids, 5, 1))
