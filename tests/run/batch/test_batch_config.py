"""``[run] mode`` and the batch limits: validated, and a bad value is exit 2 naming the key,
never a traceback."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from snapaudit.run.record.protocol import load_protocol
from tests.fakes.batch_server import FakeBatchServer
from tests.fakes.rag_service import FakeRagService
from tests.helpers.protocol import write_protocol, write_world
from tests.run.batch.helpers import REPO, protocol


def _snapaudit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    env.pop("SNAPAUDIT_TRACEBACK", None)
    return subprocess.run([sys.executable, "-c", "from snapaudit.cli import main; main()",
                           *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120, check=False)


def test_mode_defaults_to_sync_and_batch_knobs_load(tmp_path: Path) -> None:
    with FakeBatchServer() as server:
        proto = protocol(tmp_path, server, "openai")
    assert load_protocol(proto, []).run.mode == "sync"
    run = load_protocol(proto, ["run.mode=batch", "run.batch_poll_s=2.5",
                                "run.batch_max_requests=7"]).run
    assert (run.mode, run.batch_poll_s, run.batch_max_requests, run.batch_max_bytes) == (
        "batch", 2.5, 7, None)


@pytest.mark.parametrize(("sets", "message"), [
    (["run.mode=bogus"], "run.mode"),
    (["run.mode=batch", "run.batch_poll_s=0"], "run.batch_poll_s"),
    (["run.mode=batch", "run.batch_max_requests=60000"],
     "run.batch_max_requests = 60000 is over the provider's limit of 50000"),
])
def test_bad_batch_settings_exit_2_naming_the_key(tmp_path: Path, sets: list[str],
                                                  message: str) -> None:
    with FakeBatchServer() as server:
        proto = protocol(tmp_path, server, "openai")
        done = _snapaudit("run", str(proto), "--run-dir", str(tmp_path / "run"),
                          *[a for s in sets for a in ("--set", s)], cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "run" / "ledger.sqlite").exists()


def test_batch_mode_without_a_batch_capable_generator_is_refused(tmp_path: Path) -> None:
    write_world(tmp_path)
    with FakeRagService() as svc:
        proto = write_protocol(tmp_path, svc)
        done = _snapaudit("run", str(proto), "--run-dir", str(tmp_path / "run"), "--set",
                          "run.mode=batch", cwd=tmp_path)
    assert done.returncode == 2
    assert 'run.mode = "batch" needs an openai or anthropic generator' in done.stderr
    assert "Traceback" not in done.stderr
