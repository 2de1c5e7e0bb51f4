"""Retries paced per endpoint (circuit breaker), fail fast only after retries, connection
errors that name the URL (issue #30, items 6 and 7)."""

from __future__ import annotations

import asyncio
import re
import socket
import threading
import time
from pathlib import Path

import pytest

from snapaudit.cli import main
from snapaudit.errors import BackendError, EndpointDownError, TransportInvalid
from snapaudit.progress import SilentProgress
from snapaudit.run.after.failure_detail import failed_attempts, format_failures
from snapaudit.run.after.status import format_status, run_status
from snapaudit.run.engine import run_protocol_file
from snapaudit.run.execution.breaker import Breaker, BreakerPolicy
from snapaudit.run.execution.runner import CellResult, CellTask, RetryPolicy, run_cells
from snapaudit.run.record.ledger import Ledger
from snapaudit.systems.transport import HttpClient
from tests.fakes.rag_service import FakeRagService
from tests.helpers.ledger_view import query
from tests.helpers.protocol import write_protocol, write_world

CONCURRENCY = 4


def _outage(svc: FakeRagService, after_hits: int, down_s: float | None) -> threading.Thread:
    """Stop ``svc`` once it has answered ``after_hits`` calls; start it again on the same
    port ``down_s`` later (never when None)."""

    def run() -> None:
        deadline = time.monotonic() + 30
        while sum(svc.hits.values()) < after_hits and time.monotonic() < deadline:
            time.sleep(0.005)
        svc.stop()
        if down_s is not None:
            time.sleep(down_s)
            svc.start()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _failed(run: Path) -> list[tuple[str, int]]:
    return query(run / "ledger.sqlite", "SELECT reason, COUNT(*) FROM attempts "
                                        "WHERE outcome = 'transport_invalid' GROUP BY 1")


@pytest.mark.timeout(60)
def test_a_two_second_restart_costs_at_most_two_attempts_per_slot(tmp_path: Path) -> None:
    write_world(tmp_path)
    with FakeRagService(latency_s=0.03) as svc:
        port = svc.port
        proto = write_protocol(tmp_path, svc, run={
            "concurrency": CONCURRENCY, "max_attempts": 5, "backoff_base_s": 0.5,
            "backoff_max_s": 4.0})
        outage = _outage(svc, after_hits=8, down_s=2.0)
        run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
        outage.join(10)
        assert svc.port == port  # a real restart, on the same port
    failed = _failed(tmp_path / "run")
    assert failed and {reason for reason, _ in failed} == {"connection"}
    # before: every pending cell was dispatched into the outage (919 failures at c = 4)
    assert sum(n for _, n in failed) <= CONCURRENCY * 2
    accepted = query(tmp_path / "run" / "ledger.sqlite",
                     "SELECT COUNT(*) FROM cells WHERE stage = 'answer'")[0][0]
    assert accepted == 32


@pytest.mark.timeout(60)
def test_an_outage_within_the_budget_finishes_without_a_rerun(tmp_path: Path) -> None:
    write_world(tmp_path)
    with FakeRagService(latency_s=0.02) as svc:
        # probes every 0.2-0.4 s for 3 s: far more than max_attempts, which they do not spend
        proto = write_protocol(tmp_path, svc, run={
            "concurrency": CONCURRENCY, "max_attempts": 3, "backoff_base_s": 0.05,
            "backoff_max_s": 0.4, "breaker_backoff_s": 0.2, "breaker_max_wait_s": 20})
        outage = _outage(svc, after_hits=8, down_s=3.0)
        run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
        outage.join(10)
    failed = sum(n for _, n in _failed(tmp_path / "run"))
    assert CONCURRENCY <= failed <= CONCURRENCY * 2 + 3 / 0.2  # slots + probes
    assert query(tmp_path / "run" / "ledger.sqlite",
                 "SELECT COUNT(*) FROM cells WHERE stage = 'answer'")[0][0] == 32
    # every cell's attempts are explained by the ledger: at most max_attempts counted ones
    # plus its marked failed probes, which status counts apart
    per_cell = query(tmp_path / "run" / "ledger.sqlite",
                     "SELECT cell_key, COUNT(*), SUM(COALESCE(json_extract(meta, "
                     "'$.failed_probe'), 0)) FROM attempts WHERE stage = 'answer' GROUP BY 1")
    assert all(n - probes <= 3 for _, n, probes in per_cell)
    probes = sum(p for _, _, p in per_cell)
    assert probes >= 1  # the 3 s outage was probed more than once every 0.2-0.4 s
    answer = next(s for s in run_status(tmp_path / "run").stages if s.stage == "answer")
    assert answer.failed_probes == probes
    assert f"of which {probes} failed breaker probe(s)" in format_status(
        run_status(tmp_path / "run"))


@pytest.mark.timeout(60)
def test_an_outage_past_the_budget_names_the_endpoint_and_its_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_world(tmp_path)
    svc = FakeRagService(latency_s=0.02).start()
    base = f"http://127.0.0.1:{svc.port}/"
    proto = write_protocol(tmp_path, svc, run={
        "concurrency": CONCURRENCY, "breaker_backoff_s": 0.1, "breaker_max_wait_s": 0.5})
    outage = _outage(svc, after_hits=8, down_s=None)  # never back
    started = time.monotonic()
    with pytest.raises(SystemExit) as exc:
        main(["run", str(proto), "--run-dir", str(tmp_path / "run"), "--progress", "silent"])
    outage.join(10)
    assert exc.value.code == 2
    assert time.monotonic() - started < 10
    err = capsys.readouterr().err
    assert re.search(r"answer: endpoint (old|new) still failing after [\d.]+ s", err), err
    assert "breaker_max_wait_s = 0.5" in err
    assert f"last error: connection: connection refused by {base}" in err
    assert query(tmp_path / "run" / "ledger.sqlite",
                 "SELECT COUNT(*) FROM attempts WHERE outcome IS NULL") == [(0,)]


def test_first_attempts_failing_with_500_are_retried_not_failed_fast(tmp_path: Path) -> None:
    write_world(tmp_path)
    svc = FakeRagService(fault_share=1.0, faults_per_key=1, fault_kinds=("500",))
    with svc:
        proto = write_protocol(tmp_path, svc, run={"concurrency": CONCURRENCY})
        run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
    rows = query(tmp_path / "run" / "ledger.sqlite",
                 "SELECT reason, COUNT(*) FROM attempts GROUP BY 1 ORDER BY 1")
    assert rows == [(None, 32), ("http_500", 32)]  # every cell: one 500, one success


def test_a_refused_connection_names_the_url_and_refused() -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    url = f"http://user:secret@127.0.0.1:{port}/v1/answer?key=abc"

    async def call() -> None:
        client = HttpClient(timeout_s=2.0)
        try:
            await client.request_json("POST", url, {}, json={})
        finally:
            await client.aclose()

    with pytest.raises(TransportInvalid) as info:
        asyncio.run(call())
    assert info.value.reason == "connection"
    assert info.value.detail == f"connection refused by http://127.0.0.1:{port}/v1/answer"
    assert "secret" not in str(info.value) and "abc" not in str(info.value)


def test_the_breaker_opens_probes_in_order_and_closes() -> None:
    async def scenario() -> list[object]:
        seen: list[object] = []
        breaker = Breaker("answer", "new", BreakerPolicy(failures=2, backoff_s=0.05,
                                                         backoff_max_s=0.1, max_wait_s=5))
        assert await breaker.admit() is False  # closed: no wait
        breaker.failed("connection", None, False, "connection: refused")
        assert not breaker.open
        breaker.failed("http_503", None, False, "http_503")
        assert breaker.open
        waiters = [asyncio.create_task(breaker.admit()) for _ in range(3)]
        await asyncio.sleep(0.08)  # the first waiter is handed the probe, the others wait
        seen.append([w.done() and w.result() for w in waiters])
        breaker.failed("connection", None, True, "connection: refused")  # probe failed
        seen.append(breaker.wait_s)
        await asyncio.sleep(0.15)
        seen.append([w.done() and w.result() for w in waiters])
        breaker.succeeded(True)  # the second waiter's probe answered
        await asyncio.sleep(0)
        seen.append([w.result() for w in waiters])
        seen.append(breaker.open)
        return seen

    first, doubled, second, final, still_open = asyncio.run(scenario())
    assert first == [True, False, False]
    assert doubled == 0.1
    assert second == [True, True, False]
    assert final == [True, True, False] and still_open is False


def test_a_non_transient_answer_resets_the_breaker() -> None:
    async def scenario() -> tuple[bool, bool]:
        breaker = Breaker("answer", "old", BreakerPolicy(failures=2))
        breaker.failed("timeout", None, False, "timeout")
        breaker.failed("http_500", None, False, "http_500")  # the service answers
        breaker.failed("timeout", None, False, "timeout")
        one = breaker.open
        breaker.failed("retry_after_over_cap", 9e9, False, "over")  # the cell gives up
        return one, breaker.open

    assert asyncio.run(scenario()) == (False, False)


def test_a_spent_budget_stops_the_probe_and_every_waiting_cell() -> None:
    async def scenario() -> tuple[str, list[BaseException | None], str]:
        breaker = Breaker("answer", "new", BreakerPolicy(failures=1, backoff_s=0.02,
                                                         max_wait_s=0.05))
        breaker.failed("timeout", None, False, "timeout: no response within 1 s")
        waiters = [asyncio.create_task(breaker.admit()) for _ in range(3)]
        while True:  # probes until the budget is spent
            await asyncio.sleep(0.01)
            probing = [i for i, w in enumerate(waiters) if w.done()]
            if probing:  # the probe was handed out (in turn); it fails, back in the queue
                assert len(probing) == 1 and waiters[probing[0]].result() is True
                waiters[probing[0]] = asyncio.create_task(breaker.admit())
                try:
                    breaker.failed("timeout", None, True, "timeout: no response within 1 s")
                except EndpointDownError as exc:
                    probe_error = str(exc)
                    break
        await asyncio.sleep(0)
        errors = [w.exception() for w in waiters if w.done()]
        with pytest.raises(EndpointDownError) as later:  # a cell that comes later
            await breaker.admit()
        return probe_error, errors, str(later.value)

    probe_error, errors, later = asyncio.run(scenario())
    assert probe_error.startswith("answer: endpoint new still failing after ")
    assert "last error: timeout: no response within 1 s" in probe_error
    assert len(errors) == 3 and all(isinstance(e, EndpointDownError) for e in errors)
    assert later == probe_error


def test_an_error_elsewhere_stops_cells_waiting_on_an_open_breaker(tmp_path: Path) -> None:
    def make(key: str) -> CellTask:
        async def call(attempt: int, seed: int) -> CellResult:
            await asyncio.sleep(0.01)
            if "|old|" in key:  # old is down
                raise TransportInvalid("connection", detail="connection refused by old")
            await asyncio.sleep(0.3)
            raise BackendError("new refused the call (HTTP 401)")
        return CellTask(key, {"k": key}, call, endpoint=key.split("|")[1])

    tasks = [make(f"q{i:03d}|{s}|1") for i in range(6) for s in ("old", "old", "new")]
    policy = RetryPolicy(concurrency=4, backoff_base_s=0.0, backoff_max_s=0.0,
                         breaker=BreakerPolicy(failures=2, backoff_s=30, max_wait_s=60))
    started = time.monotonic()
    with Ledger(tmp_path / "l.sqlite") as ledger, pytest.raises(BackendError):
        asyncio.run(run_cells(ledger, "answer", tasks, policy, SilentProgress()))
    assert time.monotonic() - started < 5  # not the 30 s until the next probe


def test_a_failed_probe_is_marked_and_status_counts_it_apart(tmp_path: Path) -> None:
    """Two failed probes beyond max_attempts = 2: the ledger marks exactly those attempts,
    so the cell's four attempts are explained (1 counted failure, 2 probes, 1 success)."""
    outcomes = iter(["down", "down", "down", "ok"])

    async def call(attempt: int, seed: int) -> CellResult:
        if next(outcomes) == "down":
            raise TransportInvalid("connection", detail="connection refused")
        return CellResult({"answer": "x"})

    policy = RetryPolicy(concurrency=1, max_attempts=2, backoff_base_s=0.0, backoff_max_s=0.0,
                         breaker=BreakerPolicy(failures=1, backoff_s=0.01, max_wait_s=30))
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        asyncio.run(run_cells(ledger, "answer", [CellTask("q1|old|1", {}, call, endpoint="old")],
                              policy, SilentProgress()))
        assert ledger.failed_probes() == {"answer": 2}
    marks = query(tmp_path / "ledger.sqlite", "SELECT attempt_no, outcome, "
                  "json_extract(meta, '$.failed_probe') FROM attempts ORDER BY id")
    # the first failure counts (it opened the breaker); the two probes do not: 4 attempts
    # for max_attempts = 2 are explained by the ledger alone
    assert marks == [(1, "transport_invalid", None), (2, "transport_invalid", 1),
                     (3, "transport_invalid", 1), (4, "accepted", None)]
    latest = failed_attempts(tmp_path)  # status --failures names the mark too
    assert [(f.attempt_no, f.failed_probe) for f in latest] == [(3, True)]
    assert "a failed breaker probe, not counted against max_attempts" in format_failures(latest)
