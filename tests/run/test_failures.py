"""Retry-After cap, failure reasons of exhausted cells, fail fast on one identical error
(issue #12, items 6-8)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest
from aiohttp import web

from snapaudit.cli import main
from snapaudit.errors import RetriesExhaustedError
from snapaudit.progress import SilentProgress
from snapaudit.run.engine import run_protocol_file
from snapaudit.run.execution.failures import FAIL_FAST_FAILURES
from tests.fakes.loopback import LoopbackServer
from tests.fakes.rag_service import FakeRagService
from tests.helpers.ledger_view import query
from tests.helpers.protocol import write_protocol, write_world

WRONG_FORMAT = "Input should be 'text' or 'json_object'"


class WrongFormatServer(LoopbackServer):
    """Every call: HTTP 500 with the same body, as a server that rejects the response format."""

    def __init__(self) -> None:
        super().__init__()
        self.hits = 0
        self.states = ("old", "new")

    def url(self, state: str) -> str:
        return f"http://127.0.0.1:{self.port}/{state}/answer"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/{state}/answer", self._handle)

    async def _handle(self, request: web.Request) -> web.Response:
        self.hits += 1
        return web.Response(status=500, text=WRONG_FORMAT)


@pytest.mark.timeout(60)
def test_retry_after_over_the_cap_is_not_waited_for(tmp_path: Path) -> None:
    write_world(tmp_path)
    svc = FakeRagService(fault_share=1.0, faults_per_key=1, fault_kinds=("429",),
                         retry_after="86400")
    with svc:
        proto = write_protocol(tmp_path, svc, run={"max_attempts": 5})
        with pytest.raises(RetriesExhaustedError) as info:
            run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
    assert len(info.value.cell_keys) == 32  # every cell gave up instead of waiting a day
    assert info.value.reasons == {"retry_after_over_cap": 32}
    rows = query(tmp_path / "run" / "ledger.sqlite", "SELECT outcome, reason, error FROM attempts")
    assert len(rows) == 32  # one attempt per cell: not retried in this invocation
    outcome, reason, error = rows[0]
    assert (outcome, reason) == ("transport_invalid", "retry_after_over_cap")
    assert "asked to wait 86400 s" in error and "max_retry_after_s = 300" in error


def test_retry_after_under_a_raised_cap_is_waited_for(tmp_path: Path) -> None:
    write_world(tmp_path)
    svc = FakeRagService(fault_share=1.0, faults_per_key=1, fault_kinds=("429",),
                         retry_after="0.2")
    with svc:
        proto = write_protocol(tmp_path, svc, size=2, run={"max_retry_after_s": 0.5})
        run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
    reasons = query(tmp_path / "run" / "ledger.sqlite",
                    "SELECT reason, COUNT(*) FROM attempts GROUP BY 1 ORDER BY 1")
    assert reasons == [(None, 8), ("http_429", 8)]


def test_exhausted_retries_say_why(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_world(tmp_path)
    svc = FakeRagService(fault_share=0.4, faults_per_key=99, fault_kinds=("500", "malformed"))
    with svc:
        proto = write_protocol(tmp_path, svc, run={"max_attempts": 2})
        run = tmp_path / "run"
        with pytest.raises(SystemExit) as exc:
            main(["run", str(proto), "--run-dir", str(run), "--progress", "silent"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    db = run / "ledger.sqlite"
    by_reason = dict(query(db, "SELECT reason, COUNT(*) FROM attempts "
                               "WHERE outcome='transport_invalid' GROUP BY 1"))
    assert set(by_reason) == {"http_500", "malformed_json"}
    ordered = sorted(by_reason.items(), key=lambda kv: (-kv[1], kv[0]))
    assert "failures by reason: " + ", ".join(f"{r} x{n}" for r, n in ordered) in err
    last = {}
    for key, reason, error in query(db, "SELECT cell_key, reason, error FROM attempts "
                                        "WHERE outcome='transport_invalid' ORDER BY id"):
        last[key.split("|")[1]] = f"{reason}: {error}" if error else reason
    for state, text in last.items():
        assert f"last error at {state}: {text[:60]}" in err
    status = json.loads(_status_json(run, capsys))
    answer = next(s for s in status["stages"] if s["stage"] == "answer")
    assert answer["failures"]["reasons"] == by_reason
    assert set(answer["failures"]["last_error"]) == set(last)


def _status_json(run: Path, capsys: pytest.CaptureFixture[str]) -> str:
    main(["status", str(run), "--json"])
    return capsys.readouterr().out


def test_one_identical_error_fails_fast_and_is_quoted(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    write_world(tmp_path)
    with WrongFormatServer() as svc:
        proto = write_protocol(tmp_path, svc, run={"max_attempts": 5})  # type: ignore[arg-type]
        with pytest.raises(SystemExit) as exc:
            main(["run", str(proto), "--run-dir", str(tmp_path / "run"), "--progress", "silent"])
        hits = svc.hits
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert WRONG_FORMAT in err and "identical failures" in err
    attempts = query(tmp_path / "run" / "ledger.sqlite", "SELECT COUNT(*) FROM attempts")[0][0]
    # 32 cells x 5 attempts = 160 before; now the threshold plus the calls in flight
    assert FAIL_FAST_FAILURES <= hits <= attempts <= FAIL_FAST_FAILURES + 2 * 4  # 4 in flight
    assert query(tmp_path / "run" / "ledger.sqlite",
                 "SELECT COUNT(*) FROM attempts WHERE outcome IS NULL") == [(0,)]


def test_fail_fast_needs_identical_errors_across_cells() -> None:
    from snapaudit.run.execution.failures import FailureLog

    log = FailureLog("answer", after_retries=True)
    # one cell failing the same way many times is not enough (fewer than 3 cells)
    assert all(log.record("q1|old|1", "http_500", "x") is None for _ in range(10))
    assert log.record("q2|old|1", "http_500", "x") is None
    assert log.record("q2|old|1", "http_500", "x") is None  # its retry failed too
    assert log.record("q3|old|1", "http_500", "x") is None  # a first attempt
    assert log.record("q3|old|1", "http_500", "x") == "http_500: x"  # 3 cells' retries
    # first attempts that fail, retries not yet seen
    first_only = FailureLog("answer", after_retries=True)
    assert all(first_only.record(f"q{i}|old|1", "http_500", "x") is None for i in range(40))
    # a retry failing differently is not the same failure
    changed = FailureLog("answer", after_retries=True)
    for i in range(20):
        assert changed.record(f"q{i}|old|1", "http_500", "x") is None
    assert all(changed.record(f"q{i}|old|1", "http_500", "y") is None for i in range(2))
    batch = FailureLog("answer")  # a provider batch: one round failing identically suffices
    assert [batch.record(f"q{i}|old|1", "http_500", "x") for i in range(8)][-1] == "http_500: x"
    other = FailureLog("answer")
    for i in range(20):  # alternating errors never build a run of identical ones
        assert other.record(f"q{i}|new|1", "http_500", str(i % 2)) is None
    transient = FailureLog("answer")
    assert all(transient.record(f"q{i}|new|1", "timeout", "u") is None for i in range(20))
    done = FailureLog("answer", accepted=1)
    assert all(done.record(f"q{i}|new|1", "http_500", "x", "new") is None for i in range(20))
    assert Counter(done.reasons) == {"http_500": 20}
    assert done.last_error == {"new": "http_500: x"}
