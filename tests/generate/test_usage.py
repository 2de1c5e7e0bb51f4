"""``results.json`` records the tokens and cost a run used, per ledger stage (issue #14.4)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fakes.llm_server import FakeLLMServer
from tests.generate.helpers import write_protocol, write_world

from snapaudit.artifact.export import claims
from snapaudit.progress import SilentProgress
from snapaudit.run.engine import run_protocol_file

PRICING = '\n[run.pricing."fake-model"]\ninput_per_mtok = 1.0\noutput_per_mtok = 4.0\n'


def test_results_record_tokens_and_cost_per_stage(tmp_path: Path) -> None:
    corpus = write_world(tmp_path)
    with FakeLLMServer(usage=(12, 5)) as srv:
        srv.inject("500")  # one failed call: an attempt without usage
        generator = (f'backend = "openai"\nmodel = "fake-model"\n'
                     f'base_url = "{srv.openai_base_url}"')
        proto = write_protocol(tmp_path, corpus, generator)
        proto.write_text(proto.read_text(encoding="utf-8") + PRICING, encoding="utf-8")
        outcome = run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
    usage = json.loads((tmp_path / "run" / "results.json").read_text())["usage"]
    assert usage == outcome.results["usage"]
    # 6 questions x 3 states x 2 repeats = 36 answers, each 12 + 5 tokens, one 500 retried
    answer = usage["stages"]["answer"]
    assert answer == {"attempts": 37, "attempts_with_usage": 36, "model": "fake-model",
                      "prompt_tokens": 432, "completion_tokens": 180,
                      # (432 x 1.0 + 180 x 4.0) / 1e6 USD
                      "cost_usd": 0.001152}
    # retrieval: 2 passes x 6 questions x 3 states (n0 records "no evidence"), no tokens
    assert usage["stages"]["retrieval"]["attempts"] == 36
    assert usage["stages"]["retrieval"]["cost_usd"] is None
    assert usage["total"] == {"attempts": 73, "prompt_tokens": 432, "completion_tokens": 180,
                              "cost_usd": 0.001152}
    # metered, not derived from the answers: never a claim the verifier must recompute
    assert not any(c["claim"].startswith("usage") for c in claims(outcome.results))
