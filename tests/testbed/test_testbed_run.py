"""A whole audit of the testbed against the fake OpenAI-compatible server: faults, resume
data in the ledger, and no API key anywhere in the run directory."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import pytest

from snapaudit.progress import SilentProgress
from snapaudit.run.engine import run_protocol_file
from tests.fakes.llm_server import FakeLLMServer, LLMCall
from tests.helpers.ledger_view import accepted, query
from tests.helpers.protocol import write_testbed_protocol, write_testbed_world

KEY_ENV = "SNAPAUDIT_TEST_LLM_KEY"
SECRET = "sk-test-0123456789-do-not-leak"


def responder(call: LLMCall) -> str:
    """Depends on the prompt and on the seed's parity: repeats can differ, reproducibly."""
    digest = int(hashlib.sha256(call.user.encode()).hexdigest(), 16)
    seed = int(call.body.get("seed", 0))  # the messages API has no seed
    return json.dumps({"answer": f"ans-{digest % 3}-{seed % 2}"})


# The anthropic backend forces a tool, so plain text is a malformed body, not a bad answer.
EXPECTED = {
    "openai": {"http_429": 1, "http_500": 1, "timeout": 1, "connection": 1,
               "malformed_json": 1, "malformed_body": 1, "invalid_answer": 3,
               "oversized_answer": 1},
    "anthropic": {"http_429": 1, "http_500": 1, "timeout": 1, "connection": 1,
                  "malformed_json": 1, "malformed_body": 2, "invalid_answer": 2,
                  "oversized_answer": 1},
}


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_testbed_run_survives_faults_and_never_persists_the_key(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, backend: str) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    corpus = write_testbed_world(tmp_path)
    faults = ("429", "500", "timeout", "drop", "malformed_json", "bad_shape",
              "schema_violation", "oversized", "empty_answer", "not_json")
    with FakeLLMServer(responder=responder, api_key=SECRET, retry_after="0", hang_s=1.5) as srv:
        srv.inject(*faults)
        base = srv.openai_base_url if backend == "openai" else srv.anthropic_base_url
        generator = (f'backend = "{backend}"\nmodel = "fake-model"\nbase_url = "{base}"\n'
                     f'api_key_env = "{KEY_ENV}"\ntimeout_s = 0.5')
        proto = write_testbed_protocol(tmp_path, corpus, generator)
        run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
        calls = list(srv.calls)
    db = tmp_path / "run" / "ledger.sqlite"
    cells = accepted(db)
    assert len(cells) == 6 * 3 * 2
    assert len(calls) == len(cells) + len(faults)
    attempts = query(db, "SELECT outcome, reason, usage FROM attempts WHERE stage='answer'")
    reasons = Counter(r for o, r, _ in attempts if o == "transport_invalid")
    assert reasons == EXPECTED[backend]
    usages = [json.loads(u) for o, _, u in attempts if o == "accepted"]
    assert usages and all(u == {"prompt_tokens": 12, "completion_tokens": 5} for u in usages)
    metas = [json.loads(m) for (m,) in query(
        db, "SELECT meta FROM attempts WHERE stage='answer' AND outcome='accepted'")]
    assert len(metas) == len(cells)
    assert all(m["model"] == "fake-model" and "temperature" in m["left_to_provider"]
               for m in metas)
    # n0 prompts carry no evidence block; retrieving states do
    n0 = [c for c in calls if "<evidence>" not in c.user]
    assert len(n0) >= 6 * 2
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path


@pytest.mark.slow
@pytest.mark.local_llm
def test_testbed_run_with_the_local_model_completes_and_resumes(
        tmp_path: Path, smollm2_path: Path) -> None:
    corpus = write_testbed_world(tmp_path)
    generator = f'backend = "local"\nmodel_path = "{smollm2_path}"\nmax_tokens = 48'
    proto = write_testbed_protocol(tmp_path, corpus, generator, top_k=1, size=2,
                           run_timeout_s=300.0)
    run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
    db = tmp_path / "run" / "ledger.sqlite"
    first = accepted(db)
    assert len(first) == 2 * 3 * 2
    usages = [json.loads(u) for (u,) in query(
        db, "SELECT usage FROM attempts WHERE stage='answer' AND outcome='accepted'")]
    assert all(u["prompt_tokens"] > 100 and u["completion_tokens"] > 3 for u in usages)
    latencies = query(db, "SELECT latency_s FROM attempts WHERE outcome='accepted'")
    assert all(lat is not None and lat > 0 for (lat,) in latencies)
    run_protocol_file(proto, tmp_path / "run", [], SilentProgress())  # resume: nothing to redo
    assert accepted(db) == first
