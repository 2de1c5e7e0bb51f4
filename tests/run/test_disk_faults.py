"""A full disk and a read-only folder, on a real small tmpfs (needs root; skipped
otherwise): exit 2 with the path and what to do, never an internal error."""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fakes.rag_service import FakeRagService
from tests.helpers.cli import run_cli, snapaudit, wait_for_new_attempt
from tests.helpers.protocol import write_protocol, write_world

FREE_AND_RERUN = "free space and re-run"


@contextlib.contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
                          capture_output=True, check=False)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(folder: Path, leave: int = 0) -> Path:
    """Fill the filesystem of ``folder`` until ``leave`` bytes (about) are left."""
    filler = folder / "filler"
    with open(filler, "wb") as f:
        try:
            while True:
                st = os.statvfs(folder)
                free = st.f_bavail * st.f_frsize
                if free <= leave:
                    break
                f.write(b"\0" * min(65536, max(4096, free - leave)))
                f.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    return filler


def _run(proto: Path, run_dir: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return snapaudit("run", str(proto), "--run-dir", str(run_dir), "--progress", "silent",
                     cwd=cwd)


@pytest.mark.slow
def test_a_full_disk_while_the_run_begins_is_exit_2_then_the_run_resumes(
        tmp_path: Path) -> None:
    write_world(tmp_path, n=4)
    with FakeRagService() as svc, tmpfs(tmp_path / "disk", "1m") as disk:
        proto = write_protocol(tmp_path, svc, size=4)
        for leave in (0, 6000, 20_000, 45_000, 90_000):
            run_dir = disk / f"run-{leave}"
            run_dir.mkdir()
            filler = fill(disk, leave)
            done = _run(proto, run_dir, tmp_path)
            filler.unlink()
            if done.returncode == 0:
                continue  # enough room left for this small run
            assert done.returncode == 2, done.stderr
            assert "internal error" not in done.stderr and "Traceback" not in done.stderr
            assert FREE_AND_RERUN in done.stderr, done.stderr
            assert str(run_dir) in done.stderr, done.stderr
            again = _run(proto, run_dir, tmp_path)  # space freed: the same command works
            assert again.returncode == 0, again.stderr
            shutil.rmtree(run_dir)
        assert not (disk / "run-0").exists()  # the fullest disk failed (and was cleaned up)


@pytest.mark.slow
def test_every_command_on_a_finished_run_with_a_full_disk_is_clear(tmp_path: Path) -> None:
    write_world(tmp_path, n=4)
    with FakeRagService() as svc, tmpfs(tmp_path / "disk", "2m") as disk:
        proto = write_protocol(tmp_path, svc, size=4)
        run_dir = disk / "run"
        assert _run(proto, run_dir, tmp_path).returncode == 0
        assert snapaudit("report", str(run_dir), cwd=tmp_path).returncode == 0
        report = (run_dir / "report.html").read_bytes()
        filler = fill(disk)
        status = snapaudit("status", str(run_dir), cwd=tmp_path)
        assert status.returncode == 0, status.stderr  # reading needs no space
        assert "stages:" in status.stdout
        for args in (["run", str(proto), "--run-dir", str(run_dir), "--progress", "silent"],
                     ["report", str(run_dir)],
                     ["export", str(run_dir), "--out", str(disk / "art")]):
            done = snapaudit(*args, cwd=tmp_path)
            assert done.returncode == 2, (args, done.stderr)
            assert "internal error" not in done.stderr, done.stderr
            assert FREE_AND_RERUN in done.stderr, (args, done.stderr)
        assert not (disk / "art").exists()
        assert not [p for p in disk.iterdir() if "partial" in p.name or p.suffix == ".tmp"]
        assert (run_dir / "report.html").read_bytes() == report  # the old one, whole
        filler.unlink()
        assert snapaudit("report", str(run_dir), cwd=tmp_path).returncode == 0


@pytest.mark.slow
def test_run_on_a_read_only_finished_run_prints_its_summary(tmp_path: Path) -> None:
    write_world(tmp_path, n=4)
    with FakeRagService() as svc, tmpfs(tmp_path / "disk", "2m") as disk:
        proto = write_protocol(tmp_path, svc, size=4)
        run_dir = disk / "run"
        assert _run(proto, run_dir, tmp_path).returncode == 0
        before = {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file()}
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        done = _run(proto, run_dir, tmp_path)
        assert done.returncode == 0, done.stderr
        assert "run already complete" in done.stdout and "read-only" in done.stdout
        assert "Verdict: " in done.stdout
        status = snapaudit("status", str(run_dir), cwd=tmp_path)
        assert status.returncode == 0, status.stderr
        report = snapaudit("report", str(run_dir), "--out", str(tmp_path / "rep"),
                           cwd=tmp_path)
        assert report.returncode == 0, report.stderr
        changed = snapaudit("run", str(proto), "--run-dir", str(run_dir), "--set",
                            "design.seed=8", "--progress", "silent", cwd=tmp_path)
        assert changed.returncode == 2 and "protocol differs" in changed.stderr
        assert {p.name: p.read_bytes() for p in run_dir.iterdir() if p.is_file()} == before


@pytest.mark.slow
def test_a_disk_that_fills_during_the_run_is_exit_2_and_the_run_resumes(
        tmp_path: Path) -> None:
    write_world(tmp_path, n=6)
    with FakeRagService(latency_s=0.2) as svc, tmpfs(tmp_path / "disk", "2m") as disk:
        proto = write_protocol(tmp_path, svc, size=6, run={"concurrency": 1})
        run_dir = disk / "run"
        proc = run_cli(proto, run_dir)
        wait_for_new_attempt(run_dir, proc)
        filler = fill(disk)
        _, err = proc.communicate(timeout=120)
        text = err.decode()
        assert proc.returncode == 2, text
        assert FREE_AND_RERUN in text and str(run_dir) in text, text
        assert "internal error" not in text and "Traceback" not in text
        filler.unlink()
        again = _run(proto, run_dir, tmp_path)
        assert again.returncode == 0, again.stderr
