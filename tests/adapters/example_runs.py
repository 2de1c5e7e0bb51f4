"""The examples' end-to-end tests share these: an example copied with a serial protocol, its
run to the end, a run SIGKILLed once some answers are accepted and resumed beside an
uninterrupted one, the accepted answer cells."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from pathlib import Path
from typing import Any

from tests.helpers.cli import kill_unless_finished, run_cli
from tests.helpers.ledger_view import accepted

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
CELLS = 6 * 2 * 2  # the examples' questions x states x repeats


def copy_example(name: str, tmp: Path) -> tuple[Path, Path]:
    """The example copied into ``tmp``: its protocol at ``concurrency = 1``, and as shipped."""
    folder = tmp / name
    shutil.copytree(EXAMPLES / name, folder, ignore=shutil.ignore_patterns("__pycache__"))
    shipped = folder / "protocol.toml"
    text = shipped.read_text(encoding="utf-8")
    assert "\nconcurrency = 4 " in text
    serial = folder / "serial.toml"
    serial.write_text(text.replace("\nconcurrency = 4 ", "\nconcurrency = 1 "),
                      encoding="utf-8")
    return serial, shipped


def finish(proto: Path, run_dir: Path) -> None:
    """``snapaudit run`` to the end (a loaded machine: up to 300 s); stderr on failure."""
    proc = run_cli(proto, run_dir)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err.decode()


def cells(run_dir: Path) -> dict[str, Any]:
    """The accepted answer cells of a run: cell key -> payload."""
    return {k: json.loads(p) for k, (_, p) in accepted(run_dir / "ledger.sqlite").items()}


def kill_after(proto: Path, run_dir: Path, count: int) -> dict[str, Any]:
    """``snapaudit run`` SIGKILLed once ``count`` answers are accepted; the cells seen."""
    proc = run_cli(proto, run_dir)
    db = run_dir / "ledger.sqlite"
    deadline = time.monotonic() + 240
    seen: dict[str, Any] = {}
    while proc.poll() is None and time.monotonic() < deadline and len(seen) < count:
        try:
            seen = cells(run_dir) if db.exists() else {}
        except sqlite3.Error:  # the schema may not exist yet
            seen = {}
        time.sleep(0.02)
    assert kill_unless_finished(proc), "the run ended before the kill"
    return seen


def killed_and_clean(killed_proto: Path, clean_proto: Path, tmp: Path
                     ) -> tuple[Path, Path, dict[str, Any]]:
    """``tmp/killed``: a run of ``killed_proto`` SIGKILLed once 4 answers are accepted, then
    resumed to the end; ``tmp/clean``: an uninterrupted run of ``clean_proto``; and the
    cells the killed run had accepted."""
    killed, clean = tmp / "killed", tmp / "clean"
    seen = kill_after(killed_proto, killed, 4)
    assert 4 <= len(seen) < CELLS, "killed mid-stage"
    finish(killed_proto, killed)
    finish(clean_proto, clean)
    return killed, clean, seen
