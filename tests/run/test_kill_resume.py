"""SIGKILL ``snapaudit run`` at random moments, resume each time, compare to a clean run."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path

import pytest

from snapaudit.progress import SilentProgress
from snapaudit.run.engine import run_protocol_file
from tests.fakes.rag_service import FakeRagService
from tests.helpers.cli import finish_run, kill_unless_finished, run_cli, wait_for_new_attempt
from tests.helpers.ledger_view import accepted, analysis, query
from tests.helpers.protocol import write_protocol, write_world

KILLS = 20
QUESTIONS = 50


@pytest.mark.slow
def test_sigkill_twenty_times_then_resume_equals_uninterrupted(tmp_path: Path) -> None:
    rng = random.Random(20261130)
    write_world(tmp_path, n=QUESTIONS)
    run_dir = tmp_path / "killed"
    seen: dict[str, tuple[int, str]] = {}
    progress_at_kill: list[int] = []
    svc = FakeRagService(latency_s=0.05, fault_share=0.2, fault_kinds=("500", "429", "drop"))
    with svc:
        proto = write_protocol(tmp_path, svc, size=QUESTIONS, run={"concurrency": 1})
        kills = 0
        while kills < KILLS:
            proc = run_cli(proto, run_dir)
            if kills % 2:  # anywhere, startup included
                time.sleep(rng.uniform(0.05, 1.5))
            else:  # mid-stage: once this process has made an attempt, whatever the machine
                wait_for_new_attempt(run_dir, proc)
                time.sleep(rng.uniform(0.0, 0.4))
            if not kill_unless_finished(proc):
                break  # the run completed before this kill
            kills += 1
            if (run_dir / "ledger.sqlite").exists():
                now = accepted(run_dir / "ledger.sqlite")
                for key, cell in seen.items():
                    assert now[key] == cell, f"accepted cell {key} was overwritten"
                seen = now
                progress_at_kill.append(len(now))
        finish_run(proto, run_dir)
    assert kills == KILLS
    assert len({n for n in progress_at_kill if 0 < n < QUESTIONS * 4}) >= 5  # killed mid-stage
    db = run_dir / "ledger.sqlite"
    cells = accepted(db)
    assert len(cells) == QUESTIONS * 4
    assert all(cells[k] == v for k, v in seen.items())
    assert query(db, "SELECT COUNT(*) FROM attempts WHERE outcome IS NULL") == [(0,)]
    interrupted = query(db, "SELECT COUNT(*) FROM attempts WHERE outcome='interrupted'")[0][0]
    assert interrupted > 0

    # an uninterrupted run against a fresh service serving the same answers
    with FakeRagService() as clean_svc:
        clean_proto = write_protocol(tmp_path, clean_svc, size=QUESTIONS,
                                     run={"concurrency": 8})
        clean = run_protocol_file(clean_proto, tmp_path / "clean", [], SilentProgress())
    killed_results = json.loads((run_dir / "results.json").read_text())
    assert analysis(killed_results) == analysis(clean.results)
    assert killed_results["usage"]["stages"]["answer"]["attempts"] > \
        clean.results["usage"]["stages"]["answer"]["attempts"]  # the retries are counted
    assert {k: json.loads(p) for k, (_, p) in cells.items()} == {
        k: json.loads(p) for k, (_, p) in accepted(tmp_path / "clean" / "ledger.sqlite").items()}
