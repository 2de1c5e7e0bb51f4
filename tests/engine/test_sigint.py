"""Ctrl-C: a storm of SIGINTs against ``snapaudit run`` (issue #12.3).

Every process exits 130 (interrupted) or 0 (finished), never a crash (139) or a traceback;
attempts in flight are marked ``interrupted`` before the process exits; no accepted cell is
lost or changed; the final resume equals an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.engine.helpers import write_protocol, write_world
from tests.engine.ledger_view import accepted, query
from tests.fakes.rag_service import FakeRagService

from snapaudit.progress import SilentProgress
from snapaudit.run.engine import run_protocol_file

REPO = Path(__file__).resolve().parents[2]
SIGNALS = 50
QUESTIONS = 60


def _cli(proto: Path, run_dir: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    return subprocess.Popen(
        [sys.executable, "-c", "from snapaudit.cli import main; main()", "run", str(proto),
         "--run-dir", str(run_dir), "--progress", "silent"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)


def _attempts(run_dir: Path) -> int:
    try:
        return int(query(run_dir / "ledger.sqlite", "SELECT COUNT(*) FROM attempts")[0][0])
    except Exception:  # no ledger or schema yet
        return 0


def _started(run_dir: Path, proc: subprocess.Popen[bytes]) -> None:
    """Wait until this process is inside the command: it has begun an attempt (a SIGINT
    during Python's own start-up, before any snapaudit code runs, is not what is tested)."""
    before = _attempts(run_dir)
    deadline = time.monotonic() + 20
    while proc.poll() is None and time.monotonic() < deadline:
        if _attempts(run_dir) > before:
            return
        time.sleep(0.01)


@pytest.mark.slow
@pytest.mark.timeout(120)
def test_sigint_storm_exits_130_or_0_and_loses_nothing(tmp_path: Path) -> None:
    rng = random.Random(20261201)
    write_world(tmp_path, n=QUESTIONS)
    run_dir = tmp_path / "storm"
    codes: list[int] = []
    seen: dict[str, tuple[int, str]] = {}
    sent = 0
    with FakeRagService(latency_s=0.06) as svc:
        proto = write_protocol(tmp_path, svc, size=QUESTIONS, run={"concurrency": 2})
        while sent < SIGNALS:
            proc = _cli(proto, run_dir)
            _started(run_dir, proc)
            time.sleep(rng.uniform(0.0, 0.3))
            for _ in range(rng.randint(1, 4)):  # a burst: later ones land in the cleanup
                if proc.poll() is not None:
                    break
                proc.send_signal(signal.SIGINT)
                sent += 1
                time.sleep(rng.uniform(0.0, 0.05))
            _, err = proc.communicate(timeout=30)
            codes.append(proc.returncode)
            assert proc.returncode in (0, 130), err.decode()[-2000:]
            assert b"Traceback" not in err, err.decode()[-2000:]
            db = run_dir / "ledger.sqlite"
            # attempts in flight were marked before the process exited, not on the next open
            assert query(db, "SELECT COUNT(*) FROM attempts WHERE outcome IS NULL") == [(0,)]
            now = accepted(db)
            assert all(now.get(k) == v for k, v in seen.items()), "an accepted cell changed"
            seen = now
            if proc.returncode == 0:
                break
        final = _cli(proto, run_dir)
        _, err = final.communicate(timeout=60)
        assert final.returncode == 0, err.decode()
    assert sent >= SIGNALS, codes  # the run was still going when the storm ended
    assert codes.count(130) >= 10  # the storm interrupted runs mid-way
    interrupted = query(run_dir / "ledger.sqlite",
                        "SELECT COUNT(*) FROM attempts WHERE outcome='interrupted'")[0][0]
    assert interrupted > 0
    cells = accepted(run_dir / "ledger.sqlite")
    assert len(cells) == QUESTIONS * 4 and all(cells[k] == v for k, v in seen.items())
    with FakeRagService() as clean_svc:
        clean_proto = write_protocol(tmp_path, clean_svc, size=QUESTIONS)
        clean = run_protocol_file(clean_proto, tmp_path / "clean", [], SilentProgress())
    assert json.loads((run_dir / "results.json").read_text()) == clean.results
    assert {k: json.loads(p) for k, (_, p) in cells.items()} == {
        k: json.loads(p) for k, (_, p) in accepted(tmp_path / "clean" / "ledger.sqlite").items()}
