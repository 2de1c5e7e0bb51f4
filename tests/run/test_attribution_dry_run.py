"""``snapaudit attribute --dry-run``: the pending calls, their tokens and cost, no call made;
the prompt estimate is the text the real calls then send."""

from __future__ import annotations

from pathlib import Path

import pytest

from snapaudit.progress import SilentProgress
from snapaudit.run.after.attribution_run import attribute_run
from snapaudit.run.engine import run_protocol_file
from snapaudit.run.record.protocol import load_protocol
from tests.fakes.llm_server import FakeLLMServer
from tests.helpers.attribution import attribution_protocol, attribution_world, evidence_responder
from tests.helpers.cli import exit_code

PRICING = '\n[run.pricing."fake-model"]\ninput_per_mtok = 1.0\noutput_per_mtok = 0.0\n'


@pytest.mark.slow
def test_the_dry_run_prices_the_prompts_the_calls_then_send(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    corpus, _ = attribution_world(tmp_path)
    with FakeLLMServer(responder=evidence_responder) as srv:
        proto = attribution_protocol(tmp_path, corpus, srv.openai_base_url,
                                     'kind = "rule"\nname = "rule"')
        proto.write_text(proto.read_text() + PRICING)
        run_dir = tmp_path / "run"
        run_protocol_file(proto, run_dir, [], SilentProgress())
        before = len(srv.calls)
        dry = attribute_run(run_dir, SilentProgress(), dry_run=True)
        assert len(srv.calls) == before
        answers, judge = dry.stages
        # q0 alone changed, with one entering document: suff1 and nec1, two repeats each
        assert (answers.stage, answers.calls, answers.model) == ("answers", 4, "fake-model")
        budget = load_protocol(proto).generator.max_tokens  # type: ignore[union-attr]
        assert answers.completion_tokens == 4 * budget
        assert (judge.stage, judge.calls, judge.cost_usd) == ("judge", 2, None)  # rule: local
        assert dry.budget == 4 * (2 + 1) * 1 and dry.pending_calls == 6
        assert exit_code(["attribute", str(run_dir), "--dry-run", "--progress", "silent"]) == 0
        out = capsys.readouterr().out
        assert "counterfactual evidence" in out and "budget: 12 calls" in out
        attribute_run(run_dir, SilentProgress())
        sent = srv.calls[before:]
    assert len(sent) == 4
    tokens = sum(round(len(c.system) / 4) + round(len(c.user) / 4) for c in sent)
    assert answers.prompt_tokens == tokens and tokens > 4 * 50
    assert answers.cost_usd == tokens / 1e6  # input at 1 USD per million tokens
    over = exit_code(["attribute", str(run_dir), "--dry-run", "--progress", "silent"])
    assert over == 0 and "0 to make" in capsys.readouterr().out


JUDGE_PRICE = '\n[run.pricing.judge-model]\ninput_per_mtok = 0.0\noutput_per_mtok = 1.0\n'


def test_llm_judge_packets_hold_both_endpoints_and_the_repeats(tmp_path: Path) -> None:
    from snapaudit.run.after.attribution_cost import attribution_stages
    from snapaudit.run.stages.attribution import QuestionPlan
    from snapaudit.run.stages.keys import AttributionJudgeKey
    from snapaudit.systems.base import Evidence
    from snapaudit.tables import AnswerRef
    from tests.fakes.rag_service import FakeRagService
    from tests.helpers.protocol import LLM_JUDGE, protocol_text, write_world

    write_world(tmp_path, n=12)
    path = tmp_path / "protocol.toml"  # an HTTP system: its calls are counted, never priced
    path.write_text(protocol_text(FakeRagService(), judge=LLM_JUDGE) + JUDGE_PRICE)
    protocol = load_protocol(path)
    variants = {v: Evidence(("a",), "[1] a") for v in ("suff1", "nec1")}
    plan = QuestionPlan("q0", "what colour?", True, ("b",), ("a",), variants)
    answers = {("q0", "old"): [(AnswerRef("s1", r), "blue") for r in (1, 2)],
               ("q0", "new"): [(AnswerRef("s2", r), "green") for r in (1, 2)]}
    pending = {AttributionJudgeKey("q0", "nec1").encode()}  # suff1's packet already judged
    gen, judge = attribution_stages(protocol, [plan], 2, {"x"}, pending, answers)
    assert (gen.calls, gen.model, gen.cost_usd) == (0, None, None)
    # 2 old + 2 new + 2 counterfactual answers: 15 pairs at 24 tokens, plus 64
    assert (judge.calls, judge.model, judge.completion_tokens) == (1, "judge-model", 64 + 24 * 15)
    assert judge.cost_usd == (64 + 24 * 15) / 1e6 and judge.prompt_tokens > 50
