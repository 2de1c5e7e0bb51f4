"""``results.json`` records the tokens and cost a run used, per ledger stage (issue #14.4)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

from snapaudit.artifact.export import claims
from snapaudit.progress import SilentProgress
from snapaudit.run.analysis.usage import usage_summary
from snapaudit.run.engine import run_protocol_file
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.protocol import parse_protocol
from snapaudit.testbed.generate.config import GeneratorConfig, generator_config
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.rag_service import FakeRagService
from tests.helpers.protocol import protocol_text, write_testbed_protocol, write_testbed_world

PRICING = '\n[run.pricing."fake-model"]\ninput_per_mtok = 1.0\noutput_per_mtok = 4.0\n'


def test_results_record_tokens_and_cost_per_stage(tmp_path: Path) -> None:
    corpus = write_testbed_world(tmp_path)
    with FakeLLMServer(usage=(12, 5)) as srv:
        srv.inject("500")  # one failed call: an attempt without usage
        generator = (f'backend = "openai"\nmodel = "fake-model"\n'
                     f'base_url = "{srv.openai_base_url}"')
        proto = write_testbed_protocol(tmp_path, corpus, generator)
        proto.write_text(proto.read_text(encoding="utf-8") + PRICING, encoding="utf-8")
        outcome = run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
    usage = json.loads((tmp_path / "run" / "results.json").read_text())["usage"]
    assert usage == outcome.results["usage"]
    # 6 questions x 3 states x 2 repeats = 36 answers, each 12 + 5 tokens, one 500 retried
    answer = usage["stages"]["answer"]
    assert answer == {"attempts": 37, "attempts_with_usage": 36, "model": "fake-model",
                      "prompt_tokens": 432, "completion_tokens": 180,
                      "batched_prompt_tokens": 0, "batched_completion_tokens": 0,
                      # (432 x 1.0 + 180 x 4.0) / 1e6 USD
                      "cost_usd": 0.001152}
    # retrieval: 2 passes x 6 questions x 3 states (n0 records "no evidence"), no tokens
    assert usage["stages"]["retrieval"]["attempts"] == 36
    assert usage["stages"]["retrieval"]["cost_usd"] is None
    assert usage["total"] == {"attempts": 73, "prompt_tokens": 432, "completion_tokens": 180,
                              "cost_usd": 0.001152}
    # metered, not derived from the answers: never a claim the verifier must recompute
    assert not any(c["claim"].startswith("usage") for c in claims(outcome.results))


def test_only_batched_attempts_get_the_batch_discount(tmp_path: Path) -> None:
    with FakeRagService() as svc:
        text = protocol_text(svc, extra='[run.pricing."m"]\ninput_per_mtok = 2.0\n'
                                          'output_per_mtok = 10.0\nbatch_discount = 0.5\n')
    protocol = parse_protocol(tomllib.loads(text))
    protocol = protocol.model_copy(update={"judge": protocol.judge.model_copy(update={
        "kind": "llm", "name": "j", "generator": _generator("m")})})
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        for key, meta in (("q1", {"batch": "sa-1"}), ("q2", {})):
            aid = ledger.begin_attempt("judge:j", key, "h")
            ledger.finish_attempt(aid, "accepted", payload={}, meta=meta,
                                  usage={"prompt_tokens": 1000, "completion_tokens": 100})
        stage = usage_summary(ledger, protocol).stages["judge:j"]
    assert (stage.batched_prompt_tokens, stage.batched_completion_tokens) == (1000, 100)
    # sync: (1000 x 2 + 100 x 10) / 1e6 = 0.003; batched: half of the same = 0.0015
    assert stage.cost_usd == 0.0045


def _generator(model: str) -> GeneratorConfig:
    return generator_config(backend="openai", model=model, base_url="http://127.0.0.1:9/v1")


def test_attribution_counterfactuals_are_priced(tmp_path: Path) -> None:
    """The attribution stage records its generator's model: its tokens get a cost like the
    answers' (before: model and cost_usd None)."""
    from snapaudit.run.after.attribution_run import attribute_run
    from snapaudit.run.record.rundir import RunDir
    from tests.helpers.attribution import (
        attribution_protocol,
        attribution_world,
        evidence_responder,
    )

    corpus, _ = attribution_world(tmp_path)
    with FakeLLMServer(responder=evidence_responder, usage=(12, 5)) as srv:
        proto = attribution_protocol(tmp_path, corpus, srv.openai_base_url, 'kind = "none"')
        proto.write_text(proto.read_text(encoding="utf-8") + PRICING, encoding="utf-8")
        run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
        attribute_run(tmp_path / "run", SilentProgress())
    with RunDir(tmp_path / "run") as rd:
        stages = usage_summary(rd.ledger(), rd.load_protocol()).to_json()["stages"]
    # 4 counterfactual answers (suff1 and nec1, two repeats), 12 + 5 tokens each:
    # (48 x 1.0 + 20 x 4.0) / 1e6 USD
    assert stages["attribution"] == {
        "attempts": 4, "attempts_with_usage": 4, "model": "fake-model", "prompt_tokens": 48,
        "completion_tokens": 20, "batched_prompt_tokens": 0, "batched_completion_tokens": 0,
        "cost_usd": 0.000128}
