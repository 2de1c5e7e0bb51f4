"""Cost per durable attempt record in the ledger, against raw sqlite3 in the same run.

The ledger (``snapaudit.run.record.ledger.Ledger``) runs SQLite in WAL mode with
``synchronous=FULL`` and one explicit ``BEGIN IMMEDIATE`` transaction per write; the runner
groups the writes of all cells waiting at the same moment into one transaction
(``Ledger.run_batch``), so at concurrency c a commit is shared by up to c records. Measured,
per record:

- ``raw insert+commit``: sqlite3 with the same pragmas, one ~250-byte row per transaction
  (the baseline);
- ``begin_attempt``: one durable attempt row per transaction (what a cell pays before its call);
- ``begin + finish_and_accept``: the two transactions of one accepted cell;
- ``raw group of G`` and ``run_batch group of G``: G records per transaction (G = 16, 64).

Each figure is the median of ``--repeat`` runs of ``--records`` records on a fresh file in
``--dir`` (default: a temporary directory; use the disk the runs will live on). Usage::

    python bench/bench_ledger.py [--records 2000] [--repeat 5] [--dir PATH]
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from snapaudit.run.record.ledger import Ledger

PAYLOAD = {"answer": "The Eiffel Tower was completed in 1889 for the World's Fair.",
           "doc_ids": [f"doc-{i:07d}" for i in range(8)]}
REQUEST_HASH = "ab" * 32


def key(i: int) -> str:
    return f"q{i:06d}|n7|{1 + i % 2}"


def raw_insert(path: Path, records: int, group: int = 1) -> float:
    db = sqlite3.connect(str(path), isolation_level=None)
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("PRAGMA synchronous=FULL")
    db.execute("CREATE TABLE attempts (id INTEGER PRIMARY KEY AUTOINCREMENT, stage TEXT, "
               "cell_key TEXT, attempt_no INTEGER, request_hash TEXT, started_at REAL, "
               "UNIQUE (stage, cell_key, attempt_no))")
    t0 = time.perf_counter()
    for start in range(0, records, group):
        db.execute("BEGIN IMMEDIATE")
        for i in range(start, min(records, start + group)):
            db.execute("INSERT INTO attempts (stage, cell_key, attempt_no, request_hash, "
                       "started_at) VALUES (?, ?, ?, ?, ?)",
                       ("answer", key(i), 1, REQUEST_HASH, time.time()))
        db.execute("COMMIT")
    elapsed = time.perf_counter() - t0
    db.close()
    return elapsed


def ledger_begin(path: Path, records: int) -> float:
    with Ledger(path) as ledger:
        t0 = time.perf_counter()
        for i in range(records):
            ledger.begin_attempt("answer", key(i), REQUEST_HASH)
        return time.perf_counter() - t0


def ledger_cell(path: Path, records: int) -> float:
    with Ledger(path) as ledger:
        t0 = time.perf_counter()
        for i in range(records):
            aid = ledger.begin_attempt("answer", key(i), REQUEST_HASH)
            ledger.finish_and_accept("answer", key(i), aid, PAYLOAD, latency_s=0.2)
        return time.perf_counter() - t0


def ledger_batch(path: Path, records: int, group: int) -> float:
    with Ledger(path) as ledger:
        t0 = time.perf_counter()
        for start in range(0, records, group):
            ops = [partial(Ledger.begin_attempt_op, stage="answer", cell_key=key(i),
                           request_hash=REQUEST_HASH)
                   for i in range(start, min(records, start + group))]
            ledger.run_batch(ops)
        return time.perf_counter() - t0


def measure(cases: list[tuple[str, Callable[[Path, int], float]]], records: int, repeat: int,
            where: Path | None) -> dict[str, float]:
    """Median µs per record of every case; the cases take turns, so drift hits all alike."""
    times: dict[str, list[float]] = {name: [] for name, _ in cases}
    for _ in range(repeat):
        for name, fn in cases:
            with tempfile.TemporaryDirectory(dir=where) as tmp:
                times[name].append(fn(Path(tmp) / "ledger.sqlite", records))
    return {name: 1e6 * statistics.median(t) / records for name, t in times.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description="ledger cost per durable record vs raw sqlite3")
    ap.add_argument("--records", type=int, default=2000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--dir", type=Path, default=None)
    args = ap.parse_args()
    cases: list[tuple[str, Callable[[Path, int], float]]] = [
        ("raw insert+commit (baseline)", raw_insert),
        ("ledger begin_attempt", ledger_begin),
        ("ledger begin + finish_and_accept (per cell)", ledger_cell),
        ("raw group of 16", partial(raw_insert, group=16)),
        ("ledger run_batch group of 16", partial(ledger_batch, group=16)),
        ("raw group of 64", partial(raw_insert, group=64)),
        ("ledger run_batch group of 64", partial(ledger_batch, group=64)),
    ]
    print(f"{args.records:,} records, median of {args.repeat}; WAL, synchronous=FULL\n")
    print("| case | µs per record | records/s | x baseline |\n|---|---|---|---|")
    result = measure(cases, args.records, args.repeat, args.dir)
    base = result[cases[0][0]]
    for name, us in result.items():
        print(f"| {name} | {us:,.0f} | {1e6 / us:,.0f} | {us / base:.2f} |")


if __name__ == "__main__":
    main()
