"""Benchmark: BM25 top-8 query latency on a built corpus, this tree against an earlier revision.

    PYTHONPATH=src .venv/bin/python bench/bench_query_prefix.py --corpus DIR \\
        [--baseline-rev REV] [--rounds 2] [--queries 200]

DIR is a corpus built once (e.g. by ``bench/bench_corpus_scale.py --sizes 1000000``, whose
``WORKDIR/c-1000000-local-1`` it is); its index files are read into the page cache first.
Each round runs the baseline (``git archive REV src`` into a temporary folder) and this tree
in fresh processes, alternating: per prefix (n1, n3, n7) 20 warm-up queries, then the
median and mean of 200 (``bench/corpus_gen.queries``, as ``bench_corpus_scale.py``), with
the load average before and after. The two trees must return the same hits with the same
scores (checked on every query of the last round): the speed-up may change no result.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CODE = r"""
import hashlib, json, statistics, sys, time
sys.path.insert(0, sys.argv[3])
from corpus_gen import queries
from snapaudit.testbed.retrieval.bm25 import Bm25Retriever
qs = queries(int(sys.argv[2]))
ret = Bm25Retriever(sys.argv[1])
out, digest = {}, hashlib.sha256()
for prefix in (1, 3, 7):
    for q in qs[:20]:
        ret.search(q, prefix, 8)
    ts = []
    for q in qs:
        t0 = time.perf_counter()
        hits = ret.search(q, prefix, 8)
        ts.append(time.perf_counter() - t0)
        digest.update(repr([(h.doc_id, h.score.hex()) for h in hits]).encode())
    out[f"n{prefix}_median_ms"] = round(statistics.median(ts) * 1000, 3)
    out[f"n{prefix}_mean_ms"] = round(statistics.fmean(ts) * 1000, 3)
out["hits_sha256"] = digest.hexdigest()
print(json.dumps(out))
"""


def _warm(corpus: Path) -> None:
    for p in sorted((corpus / "bm25").rglob("*.npy")) + sorted(corpus.glob("shards/*.ids.npy")):
        with open(p, "rb") as f:
            while f.read(1 << 24):
                pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--baseline-rev", default="main")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--queries", type=int, default=200)
    a = ap.parse_args()
    _warm(a.corpus)
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", a.baseline_rev, "src"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        trees = {f"baseline ({a.baseline_rev})": Path(tmp) / "src", "this tree": ROOT / "src"}
        print("| round | code | load | n1 median ms | n3 median ms | n7 median ms | n7 mean ms |")
        print("|---|---|---|---|---|---|---|")
        digests = {}
        for r in range(a.rounds):
            for name, src in trees.items():
                load = os.getloadavg()[0]
                res = subprocess.run([sys.executable, "-c", CODE, str(a.corpus), str(a.queries),
                                      str(ROOT / "bench")], env={**os.environ,
                                                                 "PYTHONPATH": str(src)},
                                     capture_output=True, text=True, check=True)
                m = json.loads(res.stdout.strip().splitlines()[-1])
                digests[name] = m["hits_sha256"]
                print(f"| {r + 1} | {name} | {load:.1f}-{os.getloadavg()[0]:.1f} | "
                      f"{m['n1_median_ms']} | {m['n3_median_ms']} | {m['n7_median_ms']} | "
                      f"{m['n7_mean_ms']} |", flush=True)
        same = len(set(digests.values())) == 1
        print(f"\nhits and scores identical across the trees: {same}")
        if not same:
            raise SystemExit(1)


if __name__ == "__main__":
    main()
