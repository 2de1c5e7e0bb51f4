"""Batch mode against the loopback fakes of both batch APIs: splitting, per-request errors,
expiry, cancellation, custom-id matching, and D equal to a synchronous run's."""

from __future__ import annotations

import json
from collections import deque
from pathlib import Path

import pytest

from snapaudit.errors import FailFastError
from tests.fakes.batch_server import FakeBatchServer
from tests.helpers.ledger_view import accepted, query
from tests.run.batch.helpers import (
    CELLS,
    batches,
    claims,
    reasons,
    responder,
    run_batch,
    sync_results,
)

BACKENDS = ["openai", "anthropic"]
# a request failing inside its batch, as each API reports it
REQUEST_ERROR = {"openai": "http_500", "anthropic": "batch_request_error"}


@pytest.mark.slow
@pytest.mark.parametrize("backend", BACKENDS)
def test_split_batches_retry_request_errors_and_equal_a_sync_run(tmp_path: Path,
                                                                 backend: str) -> None:
    with FakeBatchServer(responder=responder, request_errors=3) as server:
        results = run_batch(tmp_path, server, backend, "run.batch_max_requests=10")
        sizes = [len(b.requests) for b in server.batches]
        submissions = dict(server.submissions)
    # 36 cells cut into 10 + 10 + 10 + 6; the 3 failed requests go into a fifth batch
    assert sizes == [10, 10, 10, 6, 3]
    assert len(submissions) == CELLS + 3 and set(submissions.values()) == {1}
    assert batches(tmp_path) == [("ended", f"{'batch' if backend == 'openai' else 'msgbatch'}"
                                  f"_{i:04d}", n) for i, n in enumerate(sizes, start=1)]
    assert reasons(tmp_path) == {REQUEST_ERROR[backend]: 3}
    db = tmp_path / "run" / "ledger.sqlite"
    assert len(accepted(db)) == CELLS
    metas = [json.loads(m) for (m,) in query(db, "SELECT meta FROM attempts WHERE "
                                                 "stage='answer' AND outcome='accepted'")]
    assert all(m["batch"].startswith("sa-") and m["provider_batch_id"] for m in metas)
    usages = [json.loads(u) for (u,) in query(db, "SELECT usage FROM attempts WHERE "
                                                  "stage='answer' AND outcome='accepted'")]
    assert usages == [{"prompt_tokens": 12, "completion_tokens": 5}] * CELLS
    assert results["usage"]["stages"]["answer"] == {
        "attempts": CELLS + 3, "attempts_with_usage": CELLS, "model": "fake-model",
        "prompt_tokens": 12 * CELLS, "completion_tokens": 5 * CELLS,
        "batched_prompt_tokens": 12 * CELLS, "batched_completion_tokens": 5 * CELLS,
        "cost_usd": None}
    assert claims(results) == claims(sync_results(tmp_path, backend))


@pytest.mark.slow
@pytest.mark.parametrize(("backend", "plan", "reason"), [
    ("openai", "expire", "batch_expired"), ("anthropic", "expire", "batch_expired"),
    ("openai", "cancel", "batch_cancelled"), ("anthropic", "cancel", "batch_cancelled")])
def test_an_expired_or_cancelled_batch_is_retried_in_a_later_batch(
        tmp_path: Path, backend: str, plan: str, reason: str) -> None:
    with FakeBatchServer(responder=responder, plan=deque([plan])) as server:
        results = run_batch(tmp_path, server, backend, "run.batch_max_requests=20")
        sizes = [len(b.requests) for b in server.batches]
        submissions = dict(server.submissions)
    # 20 + 16; the first batch ends with its first 10 requests done, 10 go again
    assert sizes == [20, 16, 10]
    assert reasons(tmp_path) == {reason: 10}
    assert set(submissions.values()) == {1} and len(submissions) == CELLS + 10
    assert claims(results) == claims(sync_results(tmp_path, backend))


@pytest.mark.parametrize("backend", BACKENDS)
def test_batches_respect_the_byte_limit(tmp_path: Path, backend: str) -> None:
    with FakeBatchServer(responder=responder) as server:
        run_batch(tmp_path, server, backend, "run.batch_max_bytes=8192")
    rows = query(tmp_path / "run" / "ledger.sqlite", "SELECT n_requests, n_bytes FROM batches")
    assert len(rows) > 1 and sum(n for n, _ in rows) == CELLS
    assert all(size <= 8192 for _, size in rows)


@pytest.mark.slow
def test_answers_and_judge_packets_both_go_through_batches(tmp_path: Path) -> None:
    """Answers through the OpenAI fake, the LLM judge through the Anthropic fake."""
    with FakeBatchServer(responder=responder, request_errors=1) as server:
        results = run_batch(tmp_path, server, "openai", judge="anthropic")
        apis = [(b.api, len(b.requests)) for b in server.batches]
        submissions = dict(server.submissions)
    # 36 answers (one fails: retried alone), then one packet per question (6)
    assert apis == [("openai", CELLS), ("openai", 1), ("anthropic", 6)]
    assert set(submissions.values()) == {1}
    stages = query(tmp_path / "run" / "ledger.sqlite",
                   "SELECT stage, COUNT(*) FROM batches GROUP BY stage ORDER BY stage")
    assert stages == [("answer", 2), ("judge:j", 1)]
    assert claims(results) == claims(sync_results(tmp_path, "openai", judge="anthropic"))
    assert results["kernels"]["semantic"]["d_hat"] == results["kernels"]["exact"]["d_hat"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_unknown_answers_are_accepted_and_empty_ones_retried(tmp_path: Path,
                                                            backend: str) -> None:
    """A valid answer (UNKNOWN included) is never redrawn; an empty one is transport-invalid."""
    def unknown(call: object) -> str:
        return '{"answer": "UNKNOWN"}'

    with FakeBatchServer(responder=unknown, empty_answers=4) as server:
        run_batch(tmp_path, server, backend)
        sizes = [len(b.requests) for b in server.batches]
    assert sizes == [CELLS, 4]
    assert reasons(tmp_path) == {"invalid_answer": 4}  # the prompt parser refuses ""
    db = tmp_path / "run" / "ledger.sqlite"
    assert {json.loads(p)["answer"] for _, p in accepted(db).values()} == {"UNKNOWN"}
    per_cell = query(db, "SELECT COUNT(*), COUNT(*) FILTER (WHERE outcome='accepted') FROM "
                         "attempts WHERE stage='answer' GROUP BY cell_key")
    assert sorted(per_cell) == [(1, 1)] * (CELLS - 4) + [(2, 1)] * 4


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_batch_failing_whole_with_one_error_fails_fast(tmp_path: Path, backend: str) -> None:
    """No second round (hours at a real provider) when every request fails identically."""
    with FakeBatchServer(responder=responder, request_errors=CELLS) as server:
        with pytest.raises(FailFastError, match="identical failures across"):
            run_batch(tmp_path, server, backend)
        sent = len(server.batches)
    assert sent == 1
    assert batches(tmp_path)[0][0] == "ended"  # its results were written before stopping
    assert reasons(tmp_path) == {REQUEST_ERROR[backend]: CELLS}


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_lost_create_answer_is_found_not_resent_and_poll_errors_are_retried(
        tmp_path: Path, backend: str) -> None:
    with FakeBatchServer(responder=responder, lost_creates=1, poll_errors=3) as server:
        run_batch(tmp_path, server, backend)
        sent = len(server.batches)
        submissions = dict(server.submissions)
    assert sent == 1 and len(submissions) == CELLS and set(submissions.values()) == {1}
    assert batches(tmp_path) == [("ended", f"{'batch' if backend == 'openai' else 'msgbatch'}"
                                  "_0001", CELLS)]
    assert len(accepted(tmp_path / "run" / "ledger.sqlite")) == CELLS
