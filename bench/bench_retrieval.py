"""Benchmark: the embedded prefix-exact BM25 against bm25s used directly, same data, same run.

    .venv/bin/python bench/bench_retrieval.py [--docs 50000] [--queries 200] [--seed 0]
    .venv/bin/python bench/bench_retrieval.py --real   # also the NQ-open "done when" numbers

A generated corpus (Zipfian vocabulary with per-document topic drift) is built once by
``build_corpus`` (ingest + shard + per-shard BM25 statistics); bm25s (numpy backend) indexes the
same token lists. For nested prefixes bm25s needs one index per prefix to be exact, so its
build time for n1 + n3 + n7 is printed too. Query latency is top-8 over n7 (and n1) for the same
queries. Printed as ratios measured in this run; the machine is shared and noisy.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

from snapaudit.testbed.corpus.build import CorpusInput, DocStore, build_corpus
from snapaudit.testbed.retrieval.bm25 import Bm25Retriever
from snapaudit.testbed.retrieval.tokenize import tokenize


def generate(path: Path, n_docs: int, seed: int, vocab: int = 30_000) -> list[str]:
    rng = np.random.default_rng(seed)
    words = [f"w{i}" for i in range(vocab)]
    ranks = np.arange(1, vocab + 1)
    zipf = (1 / ranks) / (1 / ranks).sum()
    with open(path, "w", encoding="utf-8") as f:
        for i in range(n_docs):
            topic = rng.integers(0, vocab - 200)
            length = int(rng.integers(60, 400))
            common = rng.choice(vocab, size=length, p=zipf)
            local = topic + rng.integers(0, 200, size=length // 4)
            toks = [words[t] for t in np.concatenate([common, local])]
            f.write(json.dumps({"id": f"g{i:07d}", "url": "", "text": " ".join(toks)}) + "\n")
    return [" ".join(words[t] for t in rng.choice(vocab, size=4, p=zipf ** 0.5 /
                                                   (zipf ** 0.5).sum())) for _ in range(400)]


def bench_ours(src: Path, out: Path, queries: list[str]) -> tuple[float, dict[int, float]]:
    t0 = time.perf_counter()
    build_corpus([CorpusInput(src)], out, shards=7, seed=0)
    build = time.perf_counter() - t0
    ret = Bm25Retriever(out)
    lat = {}
    for prefix in (1, 7):
        t0 = time.perf_counter()
        for q in queries:
            ret.search(q, prefix, 8)
        lat[prefix] = (time.perf_counter() - t0) / len(queries)
    return build, lat


def bench_bm25s(out: Path, queries: list[str]) -> tuple[float, float, float]:
    import bm25s

    store = DocStore(out)
    t0 = time.perf_counter()
    per_shard = [[tokenize(d.text) for d in store.iter_shard(j)] for j in range(7)]
    tok = time.perf_counter() - t0
    builds = {}
    models = {}
    for prefix in (1, 3, 7):
        corpus = [t for j in range(prefix) for t in per_shard[j]]
        t0 = time.perf_counter()
        model = bm25s.BM25(method="lucene", k1=0.9, b=0.4)
        model.index(corpus, show_progress=False)
        builds[prefix] = time.perf_counter() - t0
        models[prefix] = model
    qtoks = [tokenize(q) for q in queries]
    vocab = models[7].vocab_dict
    t0 = time.perf_counter()
    for toks in qtoks:
        known = [t for t in toks if t in vocab]
        if known:
            scores = models[7].get_scores(known)
            np.argpartition(-scores, 8)[:8]
    lat = (time.perf_counter() - t0) / len(queries)
    return tok + builds[7], tok + sum(builds.values()), lat


def bench_tantivy(out: Path, queries: list[str]) -> tuple[float, float] | None:
    """tantivy (if installed) on the same token text: build n7 and top-8 latency.

    Its BM25 parameters are fixed (k1=1.2, b=0.75) and its tokenizer is its own, so only the
    speeds compare; like bm25s it would need one index per prefix to be exact.
    """
    try:
        import tantivy
    except ImportError:
        return None
    store = DocStore(out)
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("id", stored=True, tokenizer_name="raw")
    builder.add_text_field("body", stored=False)
    index = tantivy.Index(builder.build())
    t0 = time.perf_counter()
    writer = index.writer(heap_size=256_000_000, num_threads=1)
    for j in range(7):
        for d in store.iter_shard(j):
            writer.add_document(tantivy.Document(id=d.doc_id, body=" ".join(tokenize(d.text))))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    build = time.perf_counter() - t0
    searcher = index.searcher()
    parsed = [index.parse_query(" ".join(tokenize(q)) or "none", ["body"]) for q in queries]
    t0 = time.perf_counter()
    for q in parsed:
        searcher.search(q, 8)
    return build, (time.perf_counter() - t0) / len(queries)


def real_data(shared: Path) -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests.testbed.retrieval.test_real_data import _norm, cohort

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "nq"
        build_corpus([CorpusInput(shared / "nq_open/nq-open-oracle.jsonl.gz", "nq-oracle"),
                      CorpusInput(shared / "wikipedia/dpr_wiki_passages_1000.jsonl", "dpr",
                                  id_prefix="dpr-")], out, shards=7, seed=0)
        ret = Bm25Retriever(out)
        for n in (100, 3610):
            qs = cohort(shared, n)
            for prefix in (1, 3, 7):
                hit = 0
                for _, q, answers in qs:
                    text = " ".join(_norm(ret.document(h.doc_id).text)
                                    for h in ret.search(q, prefix, 8))
                    hit += any(_norm(a) in text for a in answers)
                print(f"NQ-open {n} questions: BM25 top-8 answer recall n{prefix} = "
                      f"{hit / len(qs):.3f}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--docs", type=int, default=50_000)
    ap.add_argument("--queries", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--real", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / "docs.jsonl"
        queries = generate(src, args.docs, args.seed)[: args.queries]
        ours_build, ours_lat = bench_ours(src, Path(tmp) / "corpus", queries)
        b_build, b_prefixes, b_lat = bench_bm25s(Path(tmp) / "corpus", queries)
        tv = bench_tantivy(Path(tmp) / "corpus", queries)
    print(f"corpus: {args.docs} generated documents, 7 shards, {len(queries)} queries, top-8")
    print(f"snapaudit build (ingest+shard+store+bm25): {ours_build:.1f} s = "
          f"{args.docs / ours_build:,.0f} docs/s; serves every prefix exactly")
    print(f"bm25s build n7 (tokenize+index):           {b_build:.1f} s = "
          f"{args.docs / b_build:,.0f} docs/s")
    print(f"bm25s builds n1+n3+n7 (exact prefixes):    {b_prefixes:.1f} s")
    print(f"query n7: snapaudit {ours_lat[7] * 1e3:.2f} ms, bm25s {b_lat * 1e3:.2f} ms "
          f"(ratio {ours_lat[7] / b_lat:.2f}x); query n1: snapaudit {ours_lat[1] * 1e3:.2f} ms")
    print(f"build ratio snapaudit / bm25s(n7): {ours_build / b_build:.2f}x; "
          f"snapaudit / bm25s(n1+n3+n7): {ours_build / b_prefixes:.2f}x")
    if tv is None:
        print("tantivy: not installed (pip install tantivy) - skipped")
    else:
        print(f"tantivy build n7 (tokenize+index): {tv[0]:.1f} s = {args.docs / tv[0]:,.0f} "
              f"docs/s; query n7 {tv[1] * 1e3:.2f} ms (snapaudit / tantivy: build "
              f"{ours_build / tv[0]:.2f}x, query {ours_lat[7] / tv[1]:.2f}x)")
    if args.real:
        shared = Path(__file__).resolve().parents[2] / "shared" / "data"
        real_data(shared)


if __name__ == "__main__":
    main()
