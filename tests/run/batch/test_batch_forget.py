"""A batch its provider deleted (every GET answers 404): the run stops naming the way out,
``snapaudit run --forget-batch LOCAL_ID`` ends it locally, and the resume sends its requests
in a new batch and reaches the synchronous run's claims."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import deque
from pathlib import Path

import pytest

from snapaudit.errors import BackendError, ConfigError
from snapaudit.run.execution.batch_status import forget_batches
from tests.fakes.batch_server import FakeBatchServer
from tests.helpers.ledger_view import accepted, query
from tests.run.batch.helpers import (
    BATCH,
    CELLS,
    REPO,
    batches,
    claims,
    protocol,
    reasons,
    responder,
    run_batch,
    sync_results,
)


def _run_cli(tmp: Path, server: FakeBatchServer, backend: str,
             *extra: str) -> subprocess.CompletedProcess[str]:
    sets = [a for s in BATCH for a in ("--set", s)]
    return subprocess.run(
        [sys.executable, "-c", "from snapaudit.cli import main; main()", "run",
         str(protocol(tmp, server, backend)), "--run-dir", str(tmp / "run"), "--progress",
         "silent", *sets, *extra], capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")})


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_a_deleted_batch_stops_the_run_until_it_is_forgotten(tmp_path: Path,
                                                             backend: str) -> None:
    with FakeBatchServer(responder=responder, plan=deque(["vanish"])) as server:
        with pytest.raises(BackendError, match=r"--forget-batch sa-[0-9a-f]{12}-1\b"):
            run_batch(tmp_path, server, backend)
        with pytest.raises(BackendError, match="unknown to"):  # a plain resume stops again
            run_batch(tmp_path, server, backend)
        assert len(server.batches) == 1 and accepted(tmp_path / "run" / "ledger.sqlite") == {}
        local_id = f"sa-{_tag(tmp_path)}-1"
        forgotten = forget_batches(tmp_path / "run", [local_id])
        assert [(b.local_id, b.state, b.n_requests) for b in forgotten] == [
            (local_id, "submitted", CELLS)]
        results = run_batch(tmp_path, server, backend)
        submissions = dict(server.submissions)
        sent = [len(b.requests) for b in server.batches]
    assert sent == [CELLS, CELLS]  # the forgotten requests went again, once, in a new batch
    assert len(submissions) == 2 * CELLS and set(submissions.values()) == {1}
    assert [row[0] for row in batches(tmp_path)] == ["ended", "ended"]
    assert reasons(tmp_path) == {"batch_forgotten": CELLS}
    assert len(accepted(tmp_path / "run" / "ledger.sqlite")) == CELLS
    assert claims(results) == claims(sync_results(tmp_path, backend))


def _tag(tmp: Path) -> str:
    ((tag,),) = query(tmp / "run" / "ledger.sqlite",
                      "SELECT value FROM meta WHERE key='batch_tag'")
    return str(tag)


def test_forgetting_needs_an_open_batch_of_the_run(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no run here"):
        forget_batches(tmp_path / "nothing", ["sa-x-1"])
    with FakeBatchServer(responder=responder) as server:
        run_batch(tmp_path, server, "openai")
    local_id = f"sa-{_tag(tmp_path)}-1"
    with pytest.raises(ConfigError, match=f"batch {local_id} has ended \\(completed\\)"):
        forget_batches(tmp_path / "run", [local_id])
    with pytest.raises(ConfigError, match="no batch 'sa-nope-9' in this run"):
        forget_batches(tmp_path / "run", ["sa-nope-9"])


@pytest.mark.slow
def test_the_cli_names_the_way_out_and_takes_it(tmp_path: Path) -> None:
    with FakeBatchServer(responder=responder, plan=deque(["vanish"])) as server:
        first = _run_cli(tmp_path, server, "openai")
        local_id = f"sa-{_tag(tmp_path)}-1"
        assert first.returncode == 2 and "Traceback" not in first.stderr
        assert f"--forget-batch {local_id}" in first.stderr and "HTTP 404" in first.stderr
        wrong = _run_cli(tmp_path, server, "openai", "--forget-batch", "sa-nope-1")
        assert wrong.returncode == 2 and "no batch 'sa-nope-1' in this run" in wrong.stderr
        assert "Traceback" not in wrong.stderr
        done = _run_cli(tmp_path, server, "openai", "--forget-batch", local_id)
    assert done.returncode == 0, done.stderr
    assert f"forgot batch {local_id} (batch_0001): its {CELLS} requests go into a new batch" \
        in done.stderr
    assert reasons(tmp_path) == {"batch_forgotten": CELLS}
    assert len(accepted(tmp_path / "run" / "ledger.sqlite")) == CELLS
