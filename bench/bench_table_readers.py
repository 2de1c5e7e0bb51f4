"""Seconds and peak memory of the table readers on labels, answers and gold, per format, in one run.

Each reader runs in its own child process (its peak RSS read from ``getrusage`` before the
result is fingerprinted; the import of the reader's module not timed): JSONL through msgspec
(``snapaudit.tables.decoded``) and the same table as Parquet through pyarrow
(``snapaudit.tables.parquet``; converted from the JSONL by pyarrow, not timed), alternating
for ``--rounds`` rounds (medians). The results are fingerprinted as records (every question,
state, repeat, answer, doc-id list, label and gold alias, in order); the script fails when
two readers of a table differ.

Usage::

    python bench/bench_table_readers.py                        # generated, 10^4 questions
    python bench/bench_table_readers.py --labels /tmp/t1e5/labels.jsonl --only labels
    python bench/bench_table_readers.py --questions 100000 --repeats 5 --labelled 2 --judges 2
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

READERS = {
    "labels": {"jsonl (msgspec)": ("snapaudit.tables.decoded", "label_table"),
               "parquet (pyarrow)": ("snapaudit.tables.parquet", "parquet_labels")},
    "answers": {"jsonl (msgspec)": ("snapaudit.tables.decoded", "answer_table"),
                "parquet (pyarrow)": ("snapaudit.tables.parquet", "parquet_answers")},
    "gold": {"jsonl (msgspec)": ("snapaudit.tables.decoded", "gold_table"),
             "parquet (pyarrow)": ("snapaudit.tables.parquet", "parquet_gold")},
}

CHILD = """
import hashlib, importlib, json, resource, sys, time
from pathlib import Path
module, name, path = sys.argv[1:]
read = getattr(importlib.import_module(module), name)
t0 = time.perf_counter()
table = read(Path(path))
seconds = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
digest = None
if table is not None:
    h = hashlib.sha256()
    for record in (table.items() if isinstance(table, dict) else table):
        h.update(repr(record).encode())
    digest = h.hexdigest()
print(json.dumps({"seconds": seconds, "peak": peak, "digest": digest,
                  "rows": None if table is None else len(table)}))
"""


def run(module: str, name: str, path: Path) -> dict[str, Any]:
    proc = subprocess.run([sys.executable, "-c", CHILD, module, name, str(path)],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{module}.{name} failed:\n{proc.stderr}")
    result: dict[str, Any] = json.loads(proc.stdout.splitlines()[-1])
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    for kind in READERS:
        ap.add_argument(f"--{kind}", type=Path, help=f"a {kind} JSONL file (default: generate)")
    ap.add_argument("--only", choices=sorted(READERS), action="append",
                    help="time only these tables (repeatable)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--questions", type=int, default=10_000)
    ap.add_argument("--states", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--labelled", type=int, default=4)
    ap.add_argument("--judges", type=int, default=1)
    a = ap.parse_args()
    kinds = a.only or list(READERS)
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_analyze_scale import write_parquet, write_tables

    with tempfile.TemporaryDirectory() as tmp:
        paths: dict[str, Path] = {k: getattr(a, k) for k in kinds if getattr(a, k)}
        if len(paths) < len(kinds):
            made = write_tables(Path(tmp), a.questions, a.states, a.repeats, a.labelled,
                                a.judges)
            paths = {k: paths.get(k, made[k]) for k in kinds}
        folder = Path(tmp) / "parquet"
        folder.mkdir()
        parquet = write_parquet(paths, folder)
        print(f"load average at start: {os.getloadavg()[0]:.2f} (2 cores shared)")
        print(f"\n| table | MiB (jsonl / parquet) | reader | rows | seconds (median of "
              f"{a.rounds}) | peak RSS MiB | vs jsonl |\n|---|---|---|---|---|---|---|")
        for kind in kinds:
            files = {"jsonl (msgspec)": paths[kind], "parquet (pyarrow)": parquet[kind]}
            rounds = [{label: run(module, name, files[label])
                       for label, (module, name) in READERS[kind].items()}
                      for _ in range(max(1, a.rounds))]
            digests = {r["digest"] for results in rounds for r in results.values()}
            if len(digests) != 1 or None in digests:
                raise SystemExit(f"the {kind} readers' results differ (or one declined)")
            size = " / ".join(f"{f.stat().st_size / 2**20:,.1f}" for f in files.values())
            first = statistics.median(r["jsonl (msgspec)"]["seconds"] for r in rounds)
            for label in READERS[kind]:
                seconds = statistics.median(r[label]["seconds"] for r in rounds)
                peak = statistics.median(r[label]["peak"] for r in rounds)
                print(f"| {kind} | {size} | {label} | {rounds[0][label]['rows']:,} | "
                      f"{seconds:.2f} | {peak:.0f} | {seconds / first:.2f}x |")
        print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
