"""Seconds and peak memory of the labels readers on one labels file, in one run.

Each reader runs in its own child process (its peak RSS read from ``getrusage``, the import
of the reader's module not timed): the numpy template reader
(``snapaudit.tables.templatelabels.template_labels``) against the pyarrow path it stands in
front of (``snapaudit.tables.columnar.fast_labels``). Both tables are fingerprinted (every
column and dictionary); the script fails when they differ.

Usage::

    python bench/bench_table_readers.py                        # a 10^4-question file (37 MB)
    python bench/bench_table_readers.py --labels /tmp/t1e5/labels.jsonl
    python bench/bench_table_readers.py --questions 100000 --repeats 5 --labelled 2 --judges 2
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

READERS = {"template (numpy)": ("snapaudit.tables.templatelabels", "template_labels"),
           "pyarrow (fast_labels)": ("snapaudit.tables.columnar", "fast_labels")}

CHILD = """
import hashlib, importlib, json, resource, sys, time
module, name, path = sys.argv[1:]
read = getattr(importlib.import_module(module), name)
t0 = time.perf_counter()
table = read(path)
seconds = time.perf_counter() - t0
digest = None
if table is not None:
    h = hashlib.sha256(repr((table.questions, table.refs, table.judges)).encode())
    for a in (table.q, table.a, table.b, table.same, table.judge):
        h.update(a.dtype.str.encode() + a.tobytes())
    digest = h.hexdigest()
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
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
    ap.add_argument("--labels", type=Path, help="a labels file (default: generate one)")
    ap.add_argument("--questions", type=int, default=10_000)
    ap.add_argument("--states", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--labelled", type=int, default=4)
    ap.add_argument("--judges", type=int, default=1)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = a.labels
        if path is None:
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from bench_analyze_scale import write_tables

            path = write_tables(Path(tmp), a.questions, a.states, a.repeats, a.labelled,
                                a.judges)["labels"]
        print(f"load average at start: {os.getloadavg()[0]:.2f} (2 cores shared)")
        print(f"labels: {path} ({path.stat().st_size / 2**20:,.0f} MiB)")
        results = {label: run(module, name, path) for label, (module, name) in READERS.items()}
        print("\n| reader | rows | seconds | peak RSS MiB |\n|---|---|---|---|")
        for label, r in results.items():
            print(f"| {label} | {r['rows']} | {r['seconds']:.2f} | {r['peak']:.0f} |")
        template, arrow = results.values()
        if template["digest"] is not None and template["digest"] != arrow["digest"]:
            raise SystemExit("the readers' tables differ")
        print(f"\npyarrow / template = {arrow['seconds'] / template['seconds']:.2f}x"
              + ("" if template["digest"] else " (template declined: the fallback ran)"))
        print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
