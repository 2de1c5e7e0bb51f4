"""SIGKILL a batch-mode ``snapaudit run`` at the three dangerous moments, resume, and check
that no attempt was ever submitted twice and D equals a synchronous run's."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest

from snapaudit.errors import ConfigError
from snapaudit.progress import SilentProgress
from snapaudit.run.after.status import format_status, run_status
from snapaudit.run.engine import run_protocol_file
from tests.fakes.batch_server import FakeBatchServer
from tests.helpers.ledger_view import query
from tests.run.batch.helpers import (
    CELLS,
    batches,
    claims,
    cli,
    protocol,
    responder,
    run_batch,
    sync_results,
)

PREFIX = {"openai": "batch", "anthropic": "msgbatch"}


def _kill_when(server: FakeBatchServer, tmp: Path, backend: str, ready: str,
               sig: signal.Signals = signal.SIGKILL) -> int:
    proc = cli(tmp, server, backend)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and proc.poll() is None:
        if server.held.is_set() if ready == "held" else server.polls >= 2:
            break
        time.sleep(0.01)
    alive = proc.poll() is None
    proc.send_signal(sig)
    rc = proc.wait(timeout=60)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert alive, f"the run ended before it could be killed: {err}"
    assert "Traceback" not in err
    return rc


def _pending(tmp: Path) -> int:
    rows = query(tmp / "run" / "ledger.sqlite", "SELECT COUNT(*) FROM attempts WHERE "
                 "stage='answer' AND outcome IS NULL")
    return int(rows[0][0])


@pytest.mark.slow
@pytest.mark.parametrize(("backend", "hold"), [("openai", "upload"),
                                               ("anthropic", "create_before")])
def test_kill_after_attempts_committed_before_the_batch_is_submitted(
        tmp_path: Path, backend: str, hold: str) -> None:
    with FakeBatchServer(responder=responder, hold=hold) as server:
        _kill_when(server, tmp_path, backend, "held")
        assert server.batches == []  # nothing reached the provider
        assert batches(tmp_path) == [("submitting", None, CELLS)]
        assert _pending(tmp_path) == CELLS  # committed before the submission
        server.release()
        results = run_batch(tmp_path, server, backend)
        submissions = dict(server.submissions)
        sent = len(server.batches)
    assert sent == 1 and len(submissions) == CELLS and set(submissions.values()) == {1}
    assert batches(tmp_path) == [("ended", f"{PREFIX[backend]}_0001", CELLS)]
    assert claims(results) == claims(sync_results(tmp_path, backend))


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_kill_after_the_provider_created_the_batch_before_its_id_was_recorded(
        tmp_path: Path, backend: str) -> None:
    with FakeBatchServer(responder=responder, hold="create_after") as server:
        _kill_when(server, tmp_path, backend, "held")
        assert len(server.batches) == 1  # the provider has it; the ledger has no id
        assert batches(tmp_path) == [("submitting", None, CELLS)]
        server.release()
        results = run_batch(tmp_path, server, backend)
        submissions = dict(server.submissions)
        sent = len(server.batches)
    # the resume found the batch at the provider instead of sending it again
    assert sent == 1 and len(submissions) == CELLS and set(submissions.values()) == {1}
    assert batches(tmp_path) == [("ended", f"{PREFIX[backend]}_0001", CELLS)]
    assert _interrupted(tmp_path) == 0
    assert claims(results) == claims(sync_results(tmp_path, backend))


@pytest.mark.slow
@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_kill_while_polling_then_resume_polls_the_same_batch(tmp_path: Path,
                                                             backend: str) -> None:
    with FakeBatchServer(responder=responder, polls_to_end=10**6, request_errors=2) as server:
        _kill_when(server, tmp_path, backend, "polls")
        assert batches(tmp_path) == [("submitted", f"{PREFIX[backend]}_0001", CELLS)]
        status = run_status(tmp_path / "run")
        assert status.batches["by_state"] == {"answer": {"submitted": 1}}
        assert f"submitted  {PREFIX[backend]}_0001 (in_progress), 36 requests" in \
            format_status(status)
        assert status.stages[1].attempts.get("pending") == CELLS  # riding in the batch
        with pytest.raises(ConfigError, match=r"1 provider batch\(es\) still open"):
            run_protocol_file(protocol(tmp_path, server, backend), tmp_path / "run", [],
                              SilentProgress())  # a synchronous resume would send them again
        server.polls_to_end = 1
        results = run_batch(tmp_path, server, backend)
        submissions = dict(server.submissions)
        sizes = [len(b.requests) for b in server.batches]
    assert sizes == [CELLS, 2]  # the two failed requests, once, in a second batch
    assert len(submissions) == CELLS + 2 and set(submissions.values()) == {1}
    assert _interrupted(tmp_path) == 0  # riding attempts are never marked interrupted
    assert run_status(tmp_path / "run").to_json()["batches"]["by_state"] == {
        "answer": {"ended": 2}}
    assert claims(results) == claims(sync_results(tmp_path, backend))


def _interrupted(tmp: Path) -> int:
    rows = query(tmp / "run" / "ledger.sqlite", "SELECT COUNT(*) FROM attempts WHERE "
                 "stage='answer' AND outcome='interrupted'")
    return int(rows[0][0])


@pytest.mark.slow
def test_ctrl_c_while_polling_exits_130_and_keeps_the_batch(tmp_path: Path) -> None:
    with FakeBatchServer(responder=responder, polls_to_end=10**6) as server:
        assert _kill_when(server, tmp_path, "openai", "polls", signal.SIGINT) == 130
        assert batches(tmp_path) == [("submitted", "batch_0001", CELLS)]
        assert _pending(tmp_path) == CELLS and _interrupted(tmp_path) == 0
        server.polls_to_end = 1
        results = run_batch(tmp_path, server, "openai")
        submissions = dict(server.submissions)
    assert len(submissions) == CELLS and set(submissions.values()) == {1}
    assert claims(results) == claims(sync_results(tmp_path, "openai"))
