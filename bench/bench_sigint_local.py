"""Ctrl-C with the embedded local generator: time from SIGINT to exit of `snapaudit run`.

    PYTHONPATH=src .venv/bin/python bench/bench_sigint_local.py [ROUNDS]

A testbed run on the local SmolLM2 model with a generous completion budget (MAX_TOKENS=512
by default, temperature 0.8, the JSON-schema grammar), so a call is in flight when the
SIGINT arrives. Each round
starts `snapaudit run`, waits until at least one answer is accepted and a further attempt
has begun, sends one SIGINT and measures the time until the process exits. Baseline, from
the same run: the median latency of the accepted calls (what waiting for the in-flight
call would cost). Prints exit codes, attempts left without an outcome after the exit
(must be 0: marked `interrupted` before exit) and the ratio exit time / median call.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from tests.helpers.protocol import write_testbed_protocol, write_testbed_world

REPO = Path(__file__).resolve().parents[1]


def _q(db: Path, sql: str) -> list[tuple[object, ...]]:
    try:
        con = sqlite3.connect(db)
        try:
            return list(con.execute(sql))
        finally:
            con.close()
    except sqlite3.Error:
        return []


def _count(db: Path, sql: str) -> int:
    rows = _q(db, sql)
    return int(rows[0][0]) if rows else 0  # type: ignore[call-overload]


def main() -> None:
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    max_tokens = int(os.environ.get("MAX_TOKENS", "512"))
    tmp = Path(tempfile.mkdtemp(prefix="sigint-local-"))
    corpus = write_testbed_world(tmp)
    generator = (f'backend = "local"\nmax_tokens = {max_tokens}\nresponse_format = "json_schema"\n'
                 "temperature = 0.8")
    proto = write_testbed_protocol(tmp, corpus, generator, top_k=1, size=6, run_timeout_s=600.0)
    run, db = tmp / "run", tmp / "run" / "ledger.sqlite"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    exits: list[float] = []
    for i in range(rounds):
        proc = subprocess.Popen(
            [sys.executable, "-c", "from snapaudit.cli import main; main()", "run", str(proto),
             "--run-dir", str(run), "--progress", "silent"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
        accepted = _count(db, "SELECT COUNT(*) FROM cells WHERE stage='answer'")
        deadline = time.monotonic() + 600
        while proc.poll() is None and time.monotonic() < deadline:  # one more accepted, then
            if _count(db, "SELECT COUNT(*) FROM cells WHERE stage='answer'") > accepted:
                break  # the next attempt is begun right after
            time.sleep(0.05)
        time.sleep(0.3)
        if proc.poll() is not None:
            print(f"round {i}: the run ended before the SIGINT (exit {proc.returncode}): "
                  f"{proc.communicate()[1].decode()[-300:]}")
            break
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        took = time.monotonic() - sent
        exits.append(took)
        left = _count(db, "SELECT COUNT(*) FROM attempts WHERE outcome IS NULL")
        print(f"round {i}: exit {proc.returncode} after {took:.2f} s; attempts without an "
              f"outcome after exit: {left}; {err.decode().strip()[-80:]!r}")
    lat = [float(r[0]) for r in _q(db, "SELECT latency_s FROM attempts WHERE "  # type: ignore[arg-type]
                                       "outcome='accepted' AND stage='answer'")]
    if exits and lat:
        med = statistics.median(lat)
        print(f"median accepted call {med:.2f} s (n={len(lat)}); median exit after SIGINT "
              f"{statistics.median(exits):.2f} s; ratio exit/call "
              f"{statistics.median(exits) / med:.2f}")


if __name__ == "__main__":
    main()
