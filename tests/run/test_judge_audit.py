"""The judge audit: a second judge on a blind sample, stored in the ledger, compared."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from snapaudit.judge.config import JudgeConfig
from snapaudit.judge.llm import LLMJudge
from snapaudit.judge.rule import RuleJudge
from snapaudit.progress import choose_progress
from snapaudit.run.execution.runner import RetryPolicy
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.stages.judge import labels_of_stage
from snapaudit.run.stages.judge_audit import AuditPlan, audit_sample, run_judge_audit
from snapaudit.testbed.generate.config import generator_config
from snapaudit.testbed.generate.openai import OpenAIGenerator
from tests.fakes.judge_server import FakeJudgeServer, first_word
from tests.helpers.judging import GRIDS, grid_answers, grid_labels


def _audit(tmp_path: Path, judge: object, sample: int) -> tuple[object, Ledger]:
    ledger = Ledger(tmp_path / "ledger.sqlite")
    plan = AuditPlan(primary="primary", old="old", new="new", sample=sample, seed=3, draws=500)
    policy = RetryPolicy(concurrency=4, backoff_base_s=0.0, backoff_max_s=0.0)
    questions = {f"q{i}": "Which city?" for i in range(len(GRIDS))}
    result = asyncio.run(run_judge_audit(ledger, grid_answers(), grid_labels(), questions, judge,  # type: ignore[arg-type]
                                         plan, policy, choose_progress("silent")))
    return result, ledger


def test_rule_judge_audit_hand_computed(tmp_path: Path) -> None:
    result, ledger = _audit(tmp_path, RuleJudge(JudgeConfig(kind="rule", name="rule2")), 10)
    try:
        stored = labels_of_stage(ledger, "rule2")
    finally:
        ledger.close()
    assert len(stored) == 60 and len({(x.question_id, x.a, x.b) for x in stored}) == 60
    assert result.pairs == 60 and result.questions == 10  # type: ignore[attr-defined]
    assert result.agreement == pytest.approx(100 * 52 / 60)  # type: ignore[attr-defined]
    assert result.kappa == pytest.approx(12 / 17)  # type: ignore[attr-defined]
    assert result.partitions_identical == pytest.approx(80.0)  # type: ignore[attr-defined]
    assert result.d_hat == {"primary": pytest.approx(40.0),  # type: ignore[attr-defined]
                            "rule2": pytest.approx(60.0)}  # pp


def test_sample_is_outcome_blind_and_stable() -> None:
    ids = [f"q{i}" for i in range(50)]
    first = audit_sample(ids, 7, seed=1)
    assert len(first) == 7 and first == audit_sample(list(reversed(ids)), 7, seed=1)
    assert first != audit_sample(ids, 7, seed=2)
    assert set(audit_sample(ids, 5, seed=1)) <= set(first)


def test_malformed_second_judge_output_is_retried_and_recorded(tmp_path: Path) -> None:
    async def go() -> tuple[object, Ledger]:
        async with FakeJudgeServer(first_word, ["missing", "invalid_json"]) as server:
            gen = generator_config(backend="openai", base_url=server.url, model="fake")
            judge = LLMJudge(JudgeConfig(kind="llm", name="llm2", generator=gen),
                             generator=OpenAIGenerator(gen))
            try:
                ledger = Ledger(tmp_path / "ledger.sqlite")
                plan = AuditPlan("primary", "old", "new", sample=4, seed=3, draws=200)
                policy = RetryPolicy(concurrency=1, backoff_base_s=0.0, backoff_max_s=0.0)
                qs = {f"q{i}": "Which city?" for i in range(len(GRIDS))}
                res = await run_judge_audit(ledger, grid_answers(), grid_labels(), qs, judge, plan,
                                            policy, choose_progress("silent"))
            finally:
                await judge.aclose()
        return res, ledger

    result, ledger = asyncio.run(go())
    try:
        attempts = ledger.attempts("judge:llm2")
        cells = list(ledger.cells("judge:llm2"))
    finally:
        ledger.close()
    assert len(cells) == 4 and len(attempts) == 6
    assert sum(a.outcome != "accepted" for a in attempts) == 2
    assert result.agreement == 100.0  # type: ignore[attr-defined]
