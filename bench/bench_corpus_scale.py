"""Benchmark: corpus build and prefix queries at scale, against the previous builder, same run.

    PYTHONPATH=src .venv/bin/python bench/bench_corpus_scale.py \\
        [--sizes 100000,300000,1000000] [--baseline-max 300000] [--engines local,ray] \\
        [--workers 1,2] [--queries 200] [--workdir /tmp/snapaudit-scale] [--baseline-rev REV]

Synthetic web-like documents (bench/corpus_gen.py: ~600 words, Zipfian vocabulary with the
stopwords on top, topic drift, one document in ten with non-ASCII words) are generated once
per size. Every build runs in a fresh subprocess: wall time, CPU time (process + children),
peak RSS of the driver and the largest worker. The baseline is the builder of
``--baseline-rev`` (the commit before the vectorized build), checked out with ``git archive``
into the work directory and run the same way, on the same input, in the same run; its index
files are byte-identical to the new one's (checked), so the old query code also runs on the
new index. Query latency: top-8 per prefix (n1, n3, n7), in-process, and with fan-out to two
local shard servers. Exactness: top-8 of 200 queries from two shard servers against one
index built on the whole input (the n7 prefix) at the smallest size. Printed as a table and
written to ``WORKDIR/results.json``; ratios are within this run (the machine is shared: see
the load average printed with every row).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from corpus_gen import generate, queries

ROOT = Path(__file__).resolve().parents[1]

HWM = r"""
def hwm_mb():
    with open("/proc/self/status") as f:
        return next(int(x.split()[1]) for x in f if x.startswith("VmHWM:")) / 1024
"""

BUILD = HWM + r"""
import json, re, resource, sys, time
from pathlib import Path
from snapaudit.testbed.corpus.build import CorpusInput, build_corpus
src, out, kw = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
infos = []
class Rec:
    def stage(self, name, total=None): pass
    def advance(self, n=1): pass
    def info(self, message): infos.append(message)
    def close(self): pass
t0, c0 = time.perf_counter(), time.process_time()
try:
    build_corpus([CorpusInput(Path(src))], out, shards=7, progress=Rec(), **kw)
except TypeError:  # the baseline builder takes no engine arguments
    build_corpus([CorpusInput(Path(src))], out, shards=7)
wall = time.perf_counter() - t0
ch = resource.getrusage(resource.RUSAGE_CHILDREN)
me = resource.getrusage(resource.RUSAGE_SELF)
worker = [float(m) for i in infos for m in re.findall(r"RSS (\d+) MiB", i)]
print(json.dumps({"wall": wall, "cpu": me.ru_utime + me.ru_stime + ch.ru_utime + ch.ru_stime,
                  "rss_driver_mb": hwm_mb(), "rss_worker_mb": max(worker, default=0.0),
                  "info": infos}))
"""

QUERY = HWM + r"""
import json, sys, time
from snapaudit.testbed.retrieval.bm25 import Bm25Retriever
corpus, qs = sys.argv[1], json.loads(sys.argv[2])
ret = Bm25Retriever(corpus)
out = {}
for prefix in (1, 3, 7):
    for q in qs[:20]:
        ret.search(q, prefix, 8)
    t0 = time.perf_counter()
    for q in qs:
        ret.search(q, prefix, 8)
    out[f"n{prefix}"] = (time.perf_counter() - t0) / len(qs) * 1000
out["rss_mb"] = hwm_mb()
print(json.dumps(out))
"""

FANOUT = r"""
import json, sys, time
from snapaudit.testbed.retrieval.distributed import ShardedBm25
corpus, qs, engine = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
out = {}
with ShardedBm25(corpus, engine=engine, workers=2) as idx:
    idx.search_many(qs[:20], 7, 8)
    for prefix in (1, 3, 7):
        t0 = time.perf_counter()
        for q in qs:
            idx.search(q, prefix, 8)
        out[f"n{prefix}"] = (time.perf_counter() - t0) / len(qs) * 1000
        t0 = time.perf_counter()
        idx.search_many(qs, prefix, 8)
        out[f"n{prefix}_batched"] = (time.perf_counter() - t0) / len(qs) * 1000
print(json.dumps(out))
"""

EXACT = r"""
import json, sys
from snapaudit.testbed.retrieval.bm25 import Bm25Retriever
from snapaudit.testbed.retrieval.distributed import ShardedBm25
sharded, single, qs = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
ref = Bm25Retriever(single)
with ShardedBm25(sharded, workers=2) as idx:
    got = idx.search_many(qs, 7, 8)
same_ids = max_diff = 0
for q, g in zip(qs, got):
    w = ref.search(q, 1, 8)
    same_ids += [h.doc_id for h in g] == [h.doc_id for h in w]
    max_diff = max([max_diff] + [abs(a.score - b.score) for a, b in zip(g, w)])
print(json.dumps({"queries": len(qs), "same_top8": same_ids, "max_score_diff": max_diff}))
"""


def _run(code: str, args: list[str], pythonpath: Path) -> dict:  # type: ignore[type-arg]
    env = {**os.environ, "PYTHONPATH": str(pythonpath)}
    res = subprocess.run([sys.executable, "-c", code, *args], env=env, capture_output=True,
                         text=True, check=False)
    if res.returncode != 0:
        raise SystemExit(f"benchmark step failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def _tree(root: Path) -> str:
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.name != "corpus_manifest.json":
            h.update(str(p.relative_to(root)).encode() + p.read_bytes())
    return h.hexdigest()


def _load() -> float:
    return os.getloadavg()[0]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="100000,300000,1000000")
    ap.add_argument("--baseline-max", type=int, default=300_000)
    ap.add_argument("--baseline-rev", default="6b628a6")
    ap.add_argument("--engines", default="local,ray")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--exact-at", type=int, default=-1,
                    help="size of the exactness check (default: the smallest; 0: none)")
    ap.add_argument("--workdir", default=str(Path(tempfile.gettempdir()) / "snapaudit-scale"))
    args = ap.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    old_src = work / f"baseline-{args.baseline_rev}"
    if not (old_src / "src").exists():
        old_src.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", args.baseline_rev, "src"],
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(old_src)], input=archive, check=True)
    new_src = ROOT / "src"
    qs = queries(args.queries)
    results: dict[str, dict] = {}  # type: ignore[type-arg]
    out_json = work / "results.json"
    if out_json.exists():
        results = json.loads(out_json.read_text())
    sizes = [int(s) for s in args.sizes.split(",")]
    for n in sizes:
        src = work / f"web-{n}.jsonl"
        if not src.exists():
            t0 = time.perf_counter()
            generate(src, n)
            print(f"generated {n} documents in {time.perf_counter() - t0:.0f} s", flush=True)
        row = results.setdefault(str(n), {})
        runs: list[tuple[str, Path, dict]] = []  # type: ignore[type-arg]
        if n <= args.baseline_max:
            runs.append(("baseline", old_src / "src", {}))
        for engine in args.engines.split(","):
            for w in (int(x) for x in args.workers.split(",")):
                if engine == "ray" and w == 1:
                    continue
                runs.append((f"{engine}-{w}", new_src, {"engine": engine, "workers": w}))
        trees = {}
        for name, pp, kw in runs:
            if name in row and "wall" in row[name]:
                continue
            out = work / f"c-{n}-{name}"
            subprocess.run(["rm", "-rf", str(out)], check=True)
            load = _load()
            r = _run(BUILD, [str(src), str(out), json.dumps(kw)], pp)
            r["load_before"], r["load_after"] = load, _load()
            r["docs_per_s"] = n / r["wall"]
            row[name] = r
            trees[name] = _tree(out)
            print(f"{n:>8} {name:<9} wall {r['wall']:7.1f} s  cpu {r['cpu']:7.1f} s  "
                  f"{r['docs_per_s']:7.0f} docs/s  peak RSS driver {r['rss_driver_mb']:6.0f} MB "
                  f"index worker {r['rss_worker_mb']:6.0f} MB  load {load:.1f}-{_load():.1f}",
                  flush=True)
            out_json.write_text(json.dumps(results, indent=1))
        if len(set(trees.values())) > 1:
            print(f"  !! index files differ between builds at {n}: {trees}", flush=True)
        elif trees:
            print(f"  index files byte-identical across {sorted(trees)}", flush=True)
        ref = row.get("local-1", {}).get("wall")
        for name in row:
            if isinstance(row[name], dict) and "wall" in row[name] and ref:
                row[name]["speedup_vs_local1"] = ref / row[name]["wall"]
        corpus = work / f"c-{n}-local-1"
        if corpus.exists() and "query" not in row and qs:
            row["query"] = _run(QUERY, [str(corpus), json.dumps(qs)], new_src)
            row["query_baseline"] = _run(QUERY, [str(corpus), json.dumps(qs)], old_src / "src")
            row["query_again"] = _run(QUERY, [str(corpus), json.dumps(qs)], new_src)
            row["query_load"] = _load()
            row["fanout_local2"] = _run(FANOUT, [str(corpus), json.dumps(qs), "local"], new_src)
            print(f"  query ms: {row['query']} again {row['query_again']} "
                  f"baseline {row.get('query_baseline')} load {row['query_load']:.1f} "
                  f"fan-out {row['fanout_local2']}", flush=True)
        exact_at = min(sizes) if args.exact_at < 0 else args.exact_at
        if n == exact_at and "exact" not in row and corpus.exists() and qs:
            single = work / f"c-{n}-single"
            subprocess.run(["rm", "-rf", str(single)], check=True)
            _run(BUILD.replace("shards=7", "shards=1"), [str(src), str(single),
                                                          json.dumps({"workers": 1})], new_src)
            row["exact"] = _run(EXACT, [str(corpus), str(single), json.dumps(qs)], new_src)
            print(f"  exactness at {n}: {row['exact']}", flush=True)
        out_json.write_text(json.dumps(results, indent=1))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
