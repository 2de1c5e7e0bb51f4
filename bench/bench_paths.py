"""Benchmark: the cost of K corpus paths (``[testbed.paths]``) against one path, same run.

    .venv/bin/python bench/bench_paths.py [--docs 20000] [--queries 200] [--paths 3]

One corpus is built once (``build_corpus``: ingest, shards, per-shard BM25 statistics); every
path's states search it through ``Bm25Retriever.search_shards`` (statistics summed over the
state's shards at query time), so K paths add no build. The baseline for exactness without
summed statistics is one index per distinct shard set: its build time for the extra paths'
prefixes (n1, n3; n7 is the whole corpus on every path) is printed as a ratio to the one
build. Query latency (top-8) on a path prefix is printed against the protocol's prefix of the
same size. Ratios are measured in this run; the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

from bench_retrieval import generate
from snapaudit.testbed.corpus.build import CorpusInput, DocStore, build_corpus
from snapaudit.testbed.paths import path_orders
from snapaudit.testbed.retrieval.bm25 import Bm25Retriever


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--docs", type=int, default=20_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--paths", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        queries = generate(root / "docs.jsonl", args.docs, args.seed)[:args.queries]
        t0 = time.perf_counter()
        build_corpus([CorpusInput(root / "docs.jsonl")], root / "corpus", shards=7, seed=0)
        build = time.perf_counter() - t0
        orders = path_orders(7, args.paths, args.seed)
        store = DocStore(root / "corpus")
        extra = 0.0
        for j, order in enumerate(orders[1:], start=1):
            for p in (1, 3):
                sub = root / f"sub-{j}-{p}.jsonl"
                with open(sub, "w", encoding="utf-8") as f:
                    for s in order[:p]:
                        for d in store.iter_shard(s):
                            f.write(json.dumps({"id": d.doc_id, "url": d.url,
                                                "text": d.text}) + "\n")
                t0 = time.perf_counter()
                build_corpus([CorpusInput(sub)], root / f"idx-{j}-{p}", shards=1, seed=0)
                extra += time.perf_counter() - t0
        # separate retrievers: no query's postings are cached for another's
        ret = Bm25Retriever(root / "corpus")
        same = Bm25Retriever(root / "corpus")
        other = Bm25Retriever(root / "corpus")
        for q in queries[:20]:  # open and warm every shard once
            ret.search(q, 7, 8)
            same.search_shards(q, range(7), 8)
            other.search_shards(q, range(7), 8)
        print(f"{args.docs:,} documents, 7 shards, {args.paths} paths, "
              f"{len(queries)} queries, top 8")
        print(f"build: one corpus {build:.2f} s serves every path (extra build for paths: 0); "
              f"per-shard-set indexes for paths 1..{args.paths - 1} would add {extra:.2f} s "
              f"= {extra / build:.2f}x the one build")
        sizes = [store.manifest.shards[j].count for j in range(7)]
        for p in (1, 3, 7):
            t = [0.0, 0.0, 0.0]
            for _ in range(3):  # interleaved, so that load drift hits all three alike
                for q in queries:
                    t0 = time.perf_counter()
                    ret.search(q, p, 8)
                    t1 = time.perf_counter()
                    same.search_shards(q, range(p), 8)
                    t2 = time.perf_counter()
                    for order in orders[1:]:
                        other.search_shards(q, order[:p], 8)
                    t3 = time.perf_counter()
                    t[0] += t1 - t0
                    t[1] += t2 - t1
                    t[2] += (t3 - t2) / (len(orders) - 1)
            base, sub, path = (x / (3 * len(queries)) for x in t)
            docs_base = sum(sizes[:p])
            docs_path = sum(sum(sizes[j] for j in o[:p]) for o in orders[1:]) / (len(orders) - 1)
            print(f"query n{p}: prefix {1000 * base:.3f} ms; the same shards as a set "
                  f"{1000 * sub:.3f} ms (ratio {sub / base:.2f}); the paths' prefixes "
                  f"{1000 * path:.3f} ms (ratio {path / base:.2f}; documents searched "
                  f"{docs_path / docs_base:.2f}x)")
        states_one, states_k = 4, 1 + 3 * args.paths
        print(f"an audit's retrieval calls: {states_k} states on {args.paths} paths vs "
              f"{states_one} on one ({states_k / states_one:.2f}x; n0 is shared)")


if __name__ == "__main__":
    main()
