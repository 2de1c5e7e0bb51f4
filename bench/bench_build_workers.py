"""Benchmark: corpus build with one process against two workers, interleaved, in one run.

    PYTHONPATH=src .venv/bin/python bench/bench_build_workers.py [--docs 100000] \\
        [--rounds 2] [--ray] [--workdir /tmp/snapaudit-scale]

Generates ``--docs`` synthetic documents once (``bench/corpus_gen.py``, as
``bench_corpus_scale.py``), then builds them ``--rounds`` times as local-1, local-2 (and, with
``--ray``, once on Ray with 2 workers at the end), each in a fresh process (the build step of
``bench_corpus_scale.py``): wall, CPU, the load average before and after, and the speed-up
of each 2-worker build over the 1-worker build just before it. Every build's index files must
be byte-identical (one tree hash), else the script fails.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_corpus_scale import BUILD, ROOT, _run, _tree
from corpus_gen import generate


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=100_000)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--ray", action="store_true")
    ap.add_argument("--workdir", default=str(Path(tempfile.gettempdir()) / "snapaudit-scale"))
    a = ap.parse_args()
    work = Path(a.workdir)
    work.mkdir(parents=True, exist_ok=True)
    src = work / f"web-{a.docs}.jsonl"
    if not src.exists():
        generate(src, a.docs)
    plan = [(e, w) for _ in range(a.rounds) for e, w in (("local", 1), ("local", 2))]
    plan += [("ray", 2)] if a.ray else []
    print("| build | load | wall s | CPU s | x the 1-worker build before |\n|---|---|---|---|---|")
    trees, last_one = set(), 0.0
    for i, (engine, workers) in enumerate(plan):
        out = work / f"w-{a.docs}-{i}"
        subprocess.run(["rm", "-rf", str(out)], check=True)
        load = os.getloadavg()[0]
        r = _run(BUILD, [str(src), str(out), json.dumps({"engine": engine, "workers": workers})],
                 ROOT / "src")
        trees.add(_tree(out))
        subprocess.run(["rm", "-rf", str(out)], check=True)
        ratio = f"{last_one / r['wall']:.2f}" if workers == 2 and last_one else ""
        last_one = r["wall"] if workers == 1 else last_one
        print(f"| {engine}, {workers} worker(s) | {load:.1f}-{os.getloadavg()[0]:.1f} | "
              f"{r['wall']:.1f} | {r['cpu']:.1f} | {ratio} |", flush=True)
    print(f"\nindex files byte-identical across the {len(plan)} builds: {len(trees) == 1}")
    if len(trees) != 1:
        raise SystemExit(1)


if __name__ == "__main__":
    main()
