"""Replication and the judge audit use the run's own cells: ``[answers] max_bytes`` decides
what an answer may be, and the judge's tokens are metered into ``results.json`` ``usage``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from aiohttp import web

from snapaudit.errors import FailFastError, RetriesExhaustedError
from snapaudit.judge.config import JudgeConfig
from snapaudit.judge.rule import RuleJudge
from snapaudit.judge.spec import parse_judge_spec
from snapaudit.progress import SilentProgress
from snapaudit.run.after.judge_audit_run import judge_audit
from snapaudit.run.analysis.usage import usage_summary
from snapaudit.run.execution.runner import RetryPolicy
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.rundir import RunDir
from snapaudit.run.stages.replicate import ReplicationPlan, replicate_run_dir, run_replication
from snapaudit.systems.config import PythonSystemConfig, RunConfig
from snapaudit.systems.python import PythonSystem
from snapaudit.testbed.generate.config import generator_config
from tests.fakes.judge_server import FakeJudgeServer, first_word
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.loopback import LoopbackServer
from tests.fakes.world_service import RunSettings, engine_run
from tests.helpers.judging import QIDS, locked_evidence, original_tables, replicate_dir

LONG = "x" * 600  # over the testbed's 512 bytes
PRICES = ('\n[run.pricing."m"]\ninput_per_mtok = 1.0\noutput_per_mtok = 4.0\n'
          '[run.pricing."j"]\ninput_per_mtok = 2.0\noutput_per_mtok = 8.0\n')


class ThreadJudge(LoopbackServer):
    """The fake OpenAI-compatible judge (10 + 10 tokens a call) on a thread of its own."""

    def __init__(self) -> None:
        super().__init__()
        self.inner = FakeJudgeServer(first_word)

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self.inner._handle)


def _replicate(tmp_path: Path, max_bytes: int) -> Ledger:
    plan = ReplicationPlan("long", "old", "new", sample=4, seed=1, draws=200,
                           max_bytes=max_bytes)
    rows, labels = original_tables()
    config = PythonSystemConfig(target="tests.fakes.python_systems:async_answer",
                                kwargs={"suffix": LONG})
    policy = RetryPolicy(concurrency=2, max_attempts=2, backoff_base_s=0.0, backoff_max_s=0.0)
    ledger = Ledger(tmp_path / "ledger.sqlite")
    try:
        asyncio.run(run_replication(
            ledger, rows, labels, {q: "Which city?" for q in QIDS}, locked_evidence(),
            lambda s: PythonSystem(s, config, RunConfig()),
            RuleJudge(JudgeConfig(kind="rule", name="rule")), plan, policy, SilentProgress()))
    except BaseException:
        ledger.close()
        raise
    return ledger


def test_replicate_accepts_answers_the_protocols_max_bytes_allows(tmp_path: Path) -> None:
    with _replicate(tmp_path, max_bytes=1000) as ledger:
        cells = list(ledger.cells("replicate:long:answer"))
    assert len(cells) == 4 * 2 * 2
    assert all(len(c.payload["answer"].encode()) > 512 for c in cells)


def test_replicate_refuses_answers_over_the_protocols_max_bytes(tmp_path: Path) -> None:
    with pytest.raises((RetriesExhaustedError, FailFastError)):
        _replicate(tmp_path, max_bytes=100)
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        attempts = ledger.attempts("replicate:long:answer")
        assert not list(ledger.cells("replicate:long:answer"))
    ended = {(a.outcome, a.reason) for a in attempts if a.outcome != "interrupted"}
    assert ended == {("transport_invalid", "oversized_answer")}  # fail fast stops the rest


def test_replicate_reads_max_bytes_from_the_protocol(tmp_path: Path) -> None:
    run_dir = replicate_dir(tmp_path)
    path = run_dir / "protocol.resolved.toml"
    path.write_text(path.read_text() + "[answers]\nmax_bytes = 4\n")  # under "Paris"
    with FakeLLMServer(responder=lambda call: json.dumps({"answer": "Paris"})) as server:
        gen = generator_config(backend="openai", base_url=server.openai_base_url, model="m")
        with pytest.raises((RetriesExhaustedError, FailFastError)):
            asyncio.run(replicate_run_dir(run_dir, gen, 4, None, None, SilentProgress()))
    with Ledger(run_dir / "ledger.sqlite") as ledger:
        reasons = {a.reason for a in ledger.attempts("replicate:openai-m:answer")
                   if a.outcome != "interrupted"}
    assert reasons == {"oversized_answer"}


def test_replicate_judge_tokens_reach_usage(tmp_path: Path) -> None:
    run_dir = replicate_dir(tmp_path)
    with FakeLLMServer(responder=lambda call: json.dumps({"answer": "Paris"})) as server, \
            ThreadJudge() as judge_server:
        gen = generator_config(backend="openai", base_url=server.openai_base_url, model="m")
        judge = parse_judge_spec(f"llm2=openai:j@http://127.0.0.1:{judge_server.port}/v1")
        asyncio.run(replicate_run_dir(run_dir, gen, 4, None, judge, SilentProgress()))
    path = run_dir / "protocol.resolved.toml"  # [run] is not bound: priced afterwards
    path.write_text(path.read_text() + PRICES)
    rd = RunDir(run_dir)
    with rd:
        usage = usage_summary(rd.ledger(), rd.load_protocol()).stages
    judged = usage["replicate:openai-m:judge:llm2"]
    assert judged.attempts == 4 and judged.attempts_with_usage == 4
    assert (judged.prompt_tokens, judged.completion_tokens) == (40, 40)
    assert usage["replicate:openai-m:answer"].prompt_tokens == 16 * 12
    # both stages are priced (before: cost_usd None): the judge "j" at 2 + 8 USD per Mtok,
    # the replication generator "m" at 1 + 4 (16 answers, 12 + 5 tokens each)
    assert (judged.model, judged.cost_usd) == ("j", (40 * 2 + 40 * 8) / 1e6)
    answered = usage["replicate:openai-m:answer"]
    assert (answered.model, answered.cost_usd) == ("m", (192 * 1 + 80 * 4) / 1e6)


def test_judge_audit_tokens_reach_results_usage(tmp_path: Path) -> None:
    run = engine_run(tmp_path, settings=RunSettings(run_extra=PRICES))
    with ThreadJudge() as server:
        spec = f"llm2=openai:j@http://127.0.0.1:{server.port}/v1"
        outcome = judge_audit(run, parse_judge_spec(spec), 4, SilentProgress())
    assert outcome.results_path is not None
    usage = json.loads(outcome.results_path.read_text())["usage"]
    audit = usage["stages"]["judge:llm2"]
    assert audit["attempts"] == 4 and audit["attempts_with_usage"] == 4
    assert (audit["prompt_tokens"], audit["completion_tokens"]) == (40, 40)
    # the audit judge's model is priced (before: model and cost_usd None)
    assert (audit["model"], audit["cost_usd"]) == ("j", (40 * 2 + 40 * 8) / 1e6)
    assert usage["total"]["prompt_tokens"] >= 40
