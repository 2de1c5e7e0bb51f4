"""Ctrl-C: a storm of SIGINTs against ``snapaudit run`` (issue #12.3).

Every process exits 130 (interrupted) or 0 (finished), never a crash (139) or a traceback;
attempts in flight are marked ``interrupted`` before the process exits; no accepted cell is
lost or changed; the final resume equals an uninterrupted run.
"""

from __future__ import annotations

import json
import random
import signal
import time
from pathlib import Path

import pytest

from snapaudit.progress import SilentProgress
from snapaudit.run.engine import run_protocol_file
from tests.fakes.rag_service import FakeRagService
from tests.helpers.cli import run_cli, wait_for_new_attempt
from tests.helpers.ledger_view import accepted, analysis, query
from tests.helpers.protocol import write_protocol, write_world

SIGNALS = 50
QUESTIONS = 60


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
            proc = run_cli(proto, run_dir)
            wait_for_new_attempt(run_dir, proc, timeout_s=20)
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
        final = run_cli(proto, run_dir)
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
    assert analysis(json.loads((run_dir / "results.json").read_text())) == analysis(
        clean.results)
    assert {k: json.loads(p) for k, (_, p) in cells.items()} == {
        k: json.loads(p) for k, (_, p) in accepted(tmp_path / "clean" / "ledger.sqlite").items()}
