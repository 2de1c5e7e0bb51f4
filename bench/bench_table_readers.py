"""Seconds and peak memory of the table readers on labels, answers and gold files, in one run.

Each reader runs in its own child process (its peak RSS read from ``getrusage``, the import
of the reader's module not timed): the numpy template readers
(``snapaudit.tables.templatelabels``, ``templateanswers``) against the pyarrow paths they
stand in front of (``snapaudit.tables.columnar.fast_labels``, ``fast_answers``,
``fast_gold``). Both results are fingerprinted (every column, list and dictionary); the
script fails when they differ.

Usage::

    python bench/bench_table_readers.py                        # generated, 10^4 questions
    python bench/bench_table_readers.py --labels /tmp/t1e5/labels.jsonl --only labels
    python bench/bench_table_readers.py --labels D/labels.jsonl --answers D/answers.jsonl \\
        --gold D/gold.jsonl
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

READERS = {
    "labels": {"template (numpy)": ("snapaudit.tables.templatelabels", "template_labels"),
               "pyarrow": ("snapaudit.tables.columnar", "fast_labels")},
    "answers": {"template (numpy)": ("snapaudit.tables.templateanswers", "template_answers"),
                "pyarrow": ("snapaudit.tables.columnar", "fast_answers")},
    "gold": {"template (numpy)": ("snapaudit.tables.templateanswers", "template_gold"),
             "pyarrow": ("snapaudit.tables.columnar", "fast_gold")},
}

CHILD = """
import hashlib, importlib, json, resource, sys, time
import numpy as np
module, name, path = sys.argv[1:]
read = getattr(importlib.import_module(module), name)
t0 = time.perf_counter()
table = read(path)
seconds = time.perf_counter() - t0
def feed(h, value):
    if isinstance(value, np.ndarray):
        h.update(value.dtype.str.encode() + value.tobytes())
    elif isinstance(value, tuple) and any(isinstance(v, np.ndarray) for v in value):
        for v in value:
            feed(h, v)
    else:
        h.update(repr(value).encode())
digest = None
if table is not None:
    h = hashlib.sha256()
    for key, value in sorted((table if isinstance(table, dict) else vars(table)).items()):
        h.update(key.encode())
        feed(h, value)
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
    for kind in READERS:
        ap.add_argument(f"--{kind}", type=Path, help=f"a {kind} file (default: generate one)")
    ap.add_argument("--only", choices=sorted(READERS), action="append",
                    help="time only these tables (repeatable)")
    ap.add_argument("--questions", type=int, default=10_000)
    ap.add_argument("--states", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--labelled", type=int, default=4)
    ap.add_argument("--judges", type=int, default=1)
    a = ap.parse_args()
    kinds = a.only or list(READERS)
    with tempfile.TemporaryDirectory() as tmp:
        paths: dict[str, Path] = {k: getattr(a, k) for k in kinds if getattr(a, k)}
        if len(paths) < len(kinds):
            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from bench_analyze_scale import write_tables

            made = write_tables(Path(tmp), a.questions, a.states, a.repeats, a.labelled,
                                a.judges)
            paths = {k: paths.get(k, made[k]) for k in kinds}
        print(f"load average at start: {os.getloadavg()[0]:.2f} (2 cores shared)")
        print("\n| table | MiB | reader | rows | seconds | peak RSS MiB | pyarrow / template |"
              "\n|---|---|---|---|---|---|---|")
        for kind in kinds:
            path = paths[kind]
            results = {label: run(module, name, path)
                       for label, (module, name) in READERS[kind].items()}
            template, arrow = results.values()
            if template["digest"] is not None and template["digest"] != arrow["digest"]:
                raise SystemExit(f"the {kind} readers' results differ")
            ratio = arrow["seconds"] / template["seconds"]
            for label, r in results.items():
                note = "" if r is arrow else f"{ratio:.2f}x" + (
                    "" if r["digest"] else " (declined: the fallback runs)")
                print(f"| {kind} | {path.stat().st_size / 2**20:,.0f} | {label} | {r['rows']} "
                      f"| {r['seconds']:.2f} | {r['peak']:.0f} | {note} |")
        print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
