"""Timeouts and crashes of a Python system, measured: how many attempts fail, how long.

    PYTHONPATH=src:. .venv/bin/python bench/bench_python_timeouts.py [CALL_S TIMEOUT_S]

6 questions x 2 states x 2 repeats, ``[run] concurrency = 4``, ``max_attempts = 3``:

1. **timeouts**: a sync model that serves one call at a time and takes CALL_S (1.5) per
   call, ``timeout_s`` TIMEOUT_S (3). Baseline, from the same run: ``thread_safe = true``
   (4 calls handed to the model at once, as every sync target was before: the wait for the
   model counts against the timeout); then the default (``max_concurrency = 1``: waiting for
   the slot does not count). Prints the attempts that timed out of all attempts.
2. **abort**: ``isolation = "process"``, the target calls ``os.abort()`` on one question's
   first call: failed attempts, their reason and detail, whether every cell was accepted.
3. **hang**: ``isolation = "process"``, the first attempt of one question's 4 cells hangs 30 s
   under ``timeout_s = 1``: the run's wall time (vs 4 x 30 s of hanging).
4. **watchdog**: an ``async def`` target that blocks the loop 3 s on one question's first
   attempt under ``timeout_s = 2``: accepted answers slower than the timeout (must be 0) and
   the failed attempt's detail.
"""

from __future__ import annotations

import json
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from tests.helpers.protocol import python_protocol_text, save_protocol, write_world

import snapaudit

FAKES = "tests.fakes.python_isolation"


def _run(target: str, kwargs: dict[str, Any], settings: str = "",
         **run: Any) -> tuple[float, list[tuple[Any, ...]], int]:
    """(wall s, answer attempts (outcome, reason, error, latency), accepted cells)."""
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        write_world(tmp, n=6)
        kw = "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in kwargs.items()) + " }"
        body = f'target = "{FAKES}:{target}"\nkwargs = {kw}\n{settings}'
        proto = save_protocol(tmp, python_protocol_text(
            body, max_attempts=3, run={"concurrency": 4, **run}))
        start = time.monotonic()
        try:
            snapaudit.audit(proto, tmp / "run")
        except snapaudit.SnapauditError as exc:
            print(f"  the run stopped: {type(exc).__name__}: {str(exc)[:300]}")
        wall = time.monotonic() - start
        con = sqlite3.connect(tmp / "run" / "ledger.sqlite")
        try:
            rows = list(con.execute("SELECT outcome, reason, error, latency_s FROM attempts "
                                    "WHERE stage='answer' ORDER BY id"))
            cells = con.execute("SELECT COUNT(*) FROM cells WHERE stage='answer'").fetchone()[0]
        finally:
            con.close()
        return wall, rows, int(cells)


def _timeouts(label: str, rows: list[tuple[Any, ...]], cells: int, wall: float) -> None:
    timed_out = sum(r[1] == "timeout" for r in rows)
    print(f"  {label}: {timed_out} of {len(rows)} attempts timed out, {cells}/24 cells "
          f"accepted, {wall:.1f} s")


def main(call_s: float, timeout_s: float) -> None:
    print(f"1. timeouts: {call_s:g} s calls, timeout_s = {timeout_s:g}, concurrency 4")
    wall, rows, cells = _run("one_model", {"call_s": call_s}, "thread_safe = true",
                             timeout_s=timeout_s)
    _timeouts("baseline (4 calls at once)", rows, cells, wall)
    wall, rows, cells = _run("one_model", {"call_s": call_s}, timeout_s=timeout_s)
    _timeouts("default (max_concurrency = 1)", rows, cells, wall)

    print("2. abort: os.abort() on q001's first call, isolation = process")
    with tempfile.TemporaryDirectory() as marker_dir:
        wall, rows, cells = _run("abort_once", {"marker": f"{marker_dir}/aborted"},
                                 'isolation = "process"')
    failed = [r for r in rows if r[0] != "accepted"]
    print(f"  {len(failed)} failed attempt(s): {[(r[1], r[2]) for r in failed]}; "
          f"{cells}/24 cells accepted, {wall:.1f} s")

    print("3. hang: 4 cells' first attempts hang 30 s, timeout_s = 1, isolation = process")
    wall, rows, cells = _run("hang_first", {"hang_s": 30.0}, 'isolation = "process"',
                             timeout_s=1.0)
    _timeouts("process", rows, cells, wall)

    print("4. watchdog: async target blocks the loop 3 s once, timeout_s = 2")
    wall, rows, cells = _run("blocking_async", {"block_s": 3.0}, timeout_s=2.0)
    slow = [r for r in rows if r[0] == "accepted" and (r[3] or 0) > 2.0]
    failed = [r for r in rows if r[0] != "accepted"]
    print(f"  accepted answers slower than timeout_s: {len(slow)}; {cells}/24 cells "
          f"accepted, {wall:.1f} s")
    for r in failed[:2]:
        print(f"  failed: {r[1]}: {r[2]}")


if __name__ == "__main__":
    args = [float(a) for a in sys.argv[1:3]]
    main(*(args or [1.5, 3.0]))
