"""SIGKILL ``snapaudit attribute`` mid-stage, resume, and compare with an uninterrupted
attribution of the same run: no accepted cell lost, overwritten or made twice."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from snapaudit.progress import SilentProgress
from snapaudit.run.after.attribution_run import attribute_run
from snapaudit.run.engine import run_protocol_file
from tests.fakes.llm_server import FakeLLMServer
from tests.helpers.attribution import attribution_protocol, attribution_world, evidence_responder
from tests.helpers.cli import cli_popen, rows
from tests.helpers.ledger_view import accepted, query

CELLS = 4  # q0: suff1 and nec1, two repeats each


def _attribute(run_dir: Path) -> subprocess.Popen[bytes]:
    return cli_popen("attribute", str(run_dir), "--progress", "silent",
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _attempts(db: Path) -> int:
    return len(query(db, "SELECT id FROM attempts WHERE stage='attribution'"))


def _wait_for_attempts(db: Path, proc: subprocess.Popen[bytes], count: int) -> None:
    deadline = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < deadline:
        if _attempts(db) >= count:
            return
        time.sleep(0.01)


@pytest.mark.slow
def test_sigkill_mid_attribution_then_resume_loses_and_repeats_no_cell(tmp_path: Path) -> None:
    corpus, planted = attribution_world(tmp_path)
    run_dir, clean_dir = tmp_path / "run", tmp_path / "clean"
    with FakeLLMServer(responder=evidence_responder, latency_s=0.4) as srv:
        proto = attribution_protocol(tmp_path, corpus, srv.openai_base_url,
                                     'kind = "rule"\nname = "rule"', concurrency=1)
        run_protocol_file(proto, run_dir, [], SilentProgress())
        shutil.copytree(run_dir, clean_dir)
        db = run_dir / "ledger.sqlite"
        base_attempts = rows(db)
        seen: dict[str, tuple[int, str]] = {}
        at_kill: list[int] = []
        for _ in range(3):  # each process accepts one cell, is killed during its next call
            before = _attempts(db)
            proc = _attribute(run_dir)
            _wait_for_attempts(db, proc, before + 2)
            assert proc.poll() is None, "the attribution ended before it was killed"
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            assert proc.stderr is not None
            proc.stderr.close()
            now = accepted(db, "attribution")
            assert all(now[k] == v for k, v in seen.items()), "an accepted cell changed"
            seen = now
            at_kill.append(len(now))
        assert at_kill == [1, 2, 3] and rows(db) > base_attempts
        final = _attribute(run_dir)
        _, err = final.communicate(timeout=120)
        assert final.returncode == 0, err.decode()
        attribute_run(clean_dir, SilentProgress())
    cells = accepted(db, "attribution")
    assert len(cells) == CELLS and all(cells[k] == v for k, v in seen.items())
    clean = accepted(clean_dir / "ledger.sqlite", "attribution")
    assert {k: json.loads(p) for k, (_, p) in cells.items()} == {
        k: json.loads(p) for k, (_, p) in clean.items()}
    outcomes = dict(query(db, "SELECT outcome, COUNT(*) FROM attempts WHERE "
                              "stage='attribution' GROUP BY outcome"))
    assert outcomes["accepted"] == CELLS and outcomes["interrupted"] == 3  # one per kill
    assert None not in outcomes
    results = json.loads((run_dir / "results.json").read_text())
    assert results["attribution"]["questions"]["q0"]["caused"] == [planted]
    assert results["attribution"] == json.loads(
        (clean_dir / "results.json").read_text())["attribution"]
