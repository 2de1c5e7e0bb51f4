"""Faults a real user meets (issue 30): a ledger that lost its write-ahead log, two runs on
one folder, a kill while a file is written, a damaged ledger, an interrupted export."""

from __future__ import annotations

import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from snapaudit.progress import SilentProgress
from snapaudit.run.engine import run_protocol_file
from tests.fakes.rag_service import FakeRagService
from tests.helpers.cli import REPO, rows, run_cli, snapaudit, wait_for_new_attempt
from tests.helpers.protocol import write_protocol, write_world

BEGAN = ("cohort.json", "protocol.resolved.toml")


def _kill_after_cells(proto: Path, run_dir: Path, cells: int) -> None:
    proc = run_cli(proto, run_dir)
    deadline = time.monotonic() + 60
    while rows(run_dir / "ledger.sqlite", "cells") < cells and time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended before it was killed"
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.stderr is not None
    proc.stderr.close()


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in folder.iterdir()
            if p.is_file() and p.name != ".lock"}


@pytest.mark.slow
def test_a_ledger_that_lost_its_wal_is_an_integrity_error_never_a_fresh_run(
        tmp_path: Path) -> None:
    write_world(tmp_path, n=6)
    with FakeRagService(latency_s=0.1) as svc:
        proto = write_protocol(tmp_path, svc, size=6, run={"concurrency": 1})
        crashed = tmp_path / "crashed"
        _kill_after_cells(proto, crashed, 3)
        assert (crashed / "ledger.sqlite-wal").stat().st_size > 0
        lost = tmp_path / "lost"
        lost.mkdir()
        for name in (*BEGAN, "ledger.sqlite"):  # copied without ledger.sqlite-wal
            shutil.copyfile(crashed / name, lost / name)
        missing = tmp_path / "missing"
        missing.mkdir()
        for name in BEGAN:
            shutil.copyfile(crashed / name, missing / name)
        for folder in (lost, missing):
            before = _snapshot(folder)
            for args in (["run", str(proto), "--run-dir", str(folder), "--progress", "silent"],
                         ["status", str(folder)]):
                done = snapaudit(*args, cwd=tmp_path)
                assert done.returncode == 2, (args, done.stdout, done.stderr)
                assert "say the run began, but the ledger ledger.sqlite is missing" in \
                    done.stderr, done.stderr
                assert "nothing was changed" in done.stderr
                assert "internal error" not in done.stderr
            assert _snapshot(folder) == before  # nothing re-initialised, nothing written
        assert svc.hits  # the service was asked only by the crashed run
        asked = sum(svc.hits.values())
        # the crashed folder itself (its -wal kept) resumes and keeps its cells
        kept = rows(crashed / "ledger.sqlite", "cells")
        done = snapaudit("run", str(proto), "--run-dir", str(crashed), "--progress", "silent",
                         cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert sum(svc.hits.values()) - asked <= 6 * 2 * 2 - kept + 1


@pytest.mark.slow
def test_a_second_run_on_a_busy_folder_is_refused_and_a_stale_lock_taken_over(
        tmp_path: Path) -> None:
    write_world(tmp_path, n=4)
    run_dir = tmp_path / "run"
    with FakeRagService(latency_s=0.3) as svc:
        proto = write_protocol(tmp_path, svc, size=4, run={"concurrency": 1})
        first = run_cli(proto, run_dir)
        wait_for_new_attempt(run_dir, first)
        assert first.poll() is None
        second = run_cli(proto, run_dir)
        _, err = second.communicate(timeout=120)
        assert second.returncode == 2, err.decode()
        text = err.decode()
        assert f"another snapaudit run (pid {first.pid} on host " in text, text
        assert "`snapaudit run " in text and f"holds {run_dir}; wait for it or stop it" in text
        assert first.poll() is None  # the running one was left alone
        interrupted = sqlite3.connect(run_dir / "ledger.sqlite").execute(
            "SELECT COUNT(*) FROM attempts WHERE outcome = 'interrupted'").fetchone()[0]
        assert interrupted == 0
        first.send_signal(signal.SIGKILL)  # its lock file stays; the kernel drops the flock
        first.wait()
        assert first.stderr is not None
        first.stderr.close()
        assert (run_dir / ".lock").exists()
        third = run_cli(proto, run_dir)
        _, err = third.communicate(timeout=120)
        assert third.returncode == 0, err.decode()


def test_two_runs_started_together_one_runs_the_other_is_refused(tmp_path: Path) -> None:
    write_world(tmp_path, n=4)
    run_dir = tmp_path / "run"
    with FakeRagService(latency_s=0.05) as svc:
        proto = write_protocol(tmp_path, svc, size=4)
        procs = [run_cli(proto, run_dir)]
        time.sleep(0.02)
        procs.append(run_cli(proto, run_dir))
        outs = [p.communicate(timeout=120)[1].decode() for p in procs]
    codes = sorted(p.returncode for p in procs)
    assert codes == [0, 2], outs
    refused = outs[[p.returncode for p in procs].index(2)]
    assert "another snapaudit run (pid " in refused and "holds" in refused, refused


WRITER = """
import sys
from snapaudit import atomic
i = 0
while True:
    atomic.write_text(sys.argv[1], "AB"[i % 2] * 4_000_000)
    i += 1
"""


def test_a_kill_while_a_file_is_written_leaves_the_old_or_the_new_file(tmp_path: Path) -> None:
    target = tmp_path / "report.html"
    target.write_text("A" * 4_000_000)
    for delay in (0.05, 0.13, 0.21, 0.3):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(target)],
                                env={"PYTHONPATH": str(REPO / "src")})
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        text = target.read_text()
        assert len(text) == 4_000_000 and text in ("A" * 4_000_000, "B" * 4_000_000)


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("finished")
    write_world(root, n=6)
    with FakeRagService() as svc:
        proto = write_protocol(root, svc, size=6)
        run_protocol_file(proto, root / "run", [], SilentProgress())
    return proto, root / "run"


def test_a_ledger_truncated_by_one_page_is_an_integrity_error(
        finished: tuple[Path, Path], tmp_path: Path) -> None:
    proto, run = finished
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    db = copy / "ledger.sqlite"
    assert not (copy / "ledger.sqlite-wal").exists()
    with open(db, "r+b") as f:
        f.truncate(db.stat().st_size - 4096)
    for args in (["status", str(copy)], ["report", str(copy)],
                 ["run", str(proto), "--run-dir", str(copy), "--progress", "silent"]):
        done = snapaudit(*args, cwd=tmp_path)
        assert done.returncode == 2, (args, done.stderr)
        assert "internal error" not in done.stderr
        assert "is damaged" in done.stderr and "malformed" in done.stderr, done.stderr


def test_an_interrupted_export_is_named_an_incomplete_export(
        finished: tuple[Path, Path], tmp_path: Path) -> None:
    _, run = finished
    art = tmp_path / "art"
    done = snapaudit("export", str(run), "--out", str(art), cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (art / "manifest.json").unlink()  # what a kill before the last file would leave
    done = snapaudit("verify", str(art), cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "incomplete export (missing manifest.json" in done.stderr
    assert "do not reproduce" not in done.stderr
    assert not [p for p in tmp_path.iterdir() if ".partial" in p.name]

