"""The one CLI runner of the tests: ``snapaudit`` in this process with its exit code, the real
entry point in a subprocess (what a user sees), or a child process the way a user's terminal
starts it (for kill, Ctrl-C and resume tests).

A shell that starts a job in the background (``cmd &`` without job control, as CI runners and
agent shells do) sets SIGINT to "ignore" for it, and every child inherits that: Ctrl-C tests
would then pass without any Ctrl-C reaching the command. :func:`cli_popen`'s child restores
Python's own SIGINT handler before the CLI starts, as an interactive terminal leaves it.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from snapaudit.cli import main

REPO = Path(__file__).resolve().parents[2]
BOOT = ("import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from snapaudit.cli import main; main()")


def exit_code(argv: list[str]) -> int:
    """Run ``snapaudit ARGV`` in this process; its exit status (0 when it returns)."""
    try:
        main(argv)
    except SystemExit as exc:
        return int(exc.code or 0)
    return 0


def snapaudit(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The real console entry point in a subprocess (what a user sees)."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src") + os.pathsep + str(REPO)}
    env.pop("SNAPAUDIT_TRACEBACK", None)
    return subprocess.run([sys.executable, "-c", "from snapaudit.cli import main; main()",
                           *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=300, check=False)


def cli_popen(*args: str, **kwargs: Any) -> subprocess.Popen[Any]:
    """``snapaudit ARGS`` in a child process with this checkout's sources first on the path."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), **kwargs.pop("env", {})}
    return subprocess.Popen([sys.executable, "-c", BOOT, *args], env=env, **kwargs)


def run_cli(proto: Path, run_dir: Path, *extra: str) -> subprocess.Popen[bytes]:
    """``snapaudit run PROTO --run-dir RUN_DIR [EXTRA]`` with silent progress, stderr
    captured."""
    return cli_popen("run", str(proto), "--run-dir", str(run_dir), "--progress", "silent",
                     *extra, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def rows(db: Path, table: str = "attempts") -> int:
    """Rows of a ledger table so far (0 before the ledger or its schema exists)."""
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(db)
        try:
            return int(con.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:  # schema not created yet, or a write in progress
        return 0


def attempts(run_dir: Path) -> int:
    """Attempts in the run's ledger so far (0 before the ledger or its schema exists)."""
    return rows(run_dir / "ledger.sqlite")


def wait_for_new_attempt(run_dir: Path, proc: subprocess.Popen[Any],
                         timeout_s: float = 30.0) -> None:
    """Return once this process has begun an attempt (or ended, or ``timeout_s`` passed)."""
    before = attempts(run_dir)
    deadline = time.monotonic() + timeout_s
    while proc.poll() is None and time.monotonic() < deadline:
        if attempts(run_dir) > before:
            return
        time.sleep(0.01)


def kill_mid_stage(proto: Path, run_dir: Path, pause_s: float) -> bool:
    """``snapaudit run`` SIGKILLed ``pause_s`` seconds after it has begun an attempt: True
    when it was killed, False when it finished first."""

    proc = run_cli(proto, run_dir)
    wait_for_new_attempt(run_dir, proc)
    time.sleep(pause_s)
    return kill_unless_finished(proc)


def kill_unless_finished(proc: subprocess.Popen[bytes]) -> bool:
    """SIGKILL ``proc`` unless it has ended, and reap it: True when it was killed."""
    import signal

    finished = proc.poll() is not None
    if not finished:
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.stderr is not None
    proc.stderr.close()
    return not finished


def finish_run(proto: Path, run_dir: Path) -> None:
    """``snapaudit run`` to the end; its stderr in the failure when it does not succeed."""
    final = run_cli(proto, run_dir)
    _, err = final.communicate(timeout=120)
    assert final.returncode == 0, err.decode()


def killed_and_clean(protocol: Callable[[str, float], Path], tmp: Path, *, delay: float = 0.05,
                     kills: int = 3) -> tuple[dict[str, Any], dict[str, Any]]:
    """A run of ``protocol("killed.toml", delay)`` SIGKILLed ``kills`` times mid-stage and
    resumed to the end, and one of ``protocol("clean.toml", 0.0)`` never interrupted: the
    accepted cells (key -> parsed payload) of each. Their runs are ``tmp/killed`` and
    ``tmp/clean``."""
    import json

    import snapaudit
    from tests.helpers.ledger_view import accepted

    proto, run_dir, done = protocol("killed.toml", delay), tmp / "killed", 0
    while done < kills and kill_mid_stage(proto, run_dir, 0.02 + 0.03 * done):
        done += 1
    finish_run(proto, run_dir)
    assert done == kills
    snapaudit.audit(protocol("clean.toml", 0.0), tmp / "clean")
    return tuple({k: json.loads(p) for k, (_, p) in accepted(d / "ledger.sqlite").items()}
                 for d in (run_dir, tmp / "clean"))  # type: ignore[return-value]
