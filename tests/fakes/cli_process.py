"""Start ``snapaudit`` as a child process the way a user's terminal does.

A shell that starts a job in the background (``cmd &`` without job control, as CI runners and
agent shells do) sets SIGINT to "ignore" for it, and every child inherits that: Ctrl-C tests
would then pass without any Ctrl-C reaching the command. The child here restores Python's
own SIGINT handler before the CLI starts, as an interactive terminal leaves it.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
BOOT = ("import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
        "from snapaudit.cli import main; main()")


def cli_popen(*args: str, **kwargs: Any) -> subprocess.Popen[Any]:
    """``snapaudit ARGS`` in a child process with this checkout's sources first on the path."""
    env = {**os.environ, "PYTHONPATH": str(REPO / "src"), **kwargs.pop("env", {})}
    return subprocess.Popen([sys.executable, "-c", BOOT, *args], env=env, **kwargs)


def run_cli(proto: Path, run_dir: Path) -> subprocess.Popen[bytes]:
    """``snapaudit run PROTO --run-dir RUN_DIR`` with silent progress, stderr captured."""
    return cli_popen("run", str(proto), "--run-dir", str(run_dir), "--progress", "silent",
                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def attempts(run_dir: Path) -> int:
    """Attempts in the run's ledger so far (0 before the ledger or its schema exists)."""
    db = run_dir / "ledger.sqlite"
    if not db.exists():
        return 0
    try:
        con = sqlite3.connect(db)
        try:
            return int(con.execute("SELECT COUNT(*) FROM attempts").fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:  # schema not created yet, or a write in progress
        return 0


def wait_for_new_attempt(run_dir: Path, proc: subprocess.Popen[Any],
                         timeout_s: float = 30.0) -> None:
    """Return once this process has begun an attempt (or ended, or ``timeout_s`` passed)."""
    before = attempts(run_dir)
    deadline = time.monotonic() + timeout_s
    while proc.poll() is None and time.monotonic() < deadline:
        if attempts(run_dir) > before:
            return
        time.sleep(0.01)
