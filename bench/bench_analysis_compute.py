"""The analysis's compute after the tables are read (issue 29): each rewrite against the
formula it replaced, in the same run, on inputs of the 10^5 questions x 5 repeats shape, the
outputs compared byte for byte; then the whole ``analyze()`` with its worker threads against
the same analysis run sequentially (``Prefetch()`` without a pool).

Every figure is a ratio to a baseline measured in this run (the machine is shared). What
cannot be cut without changing a Monte Carlo stream is printed as such: the multinomial draws
of a bootstrap cost B x U binomials (U distinct rows), the permutation test's sum of its
groups' distinct values x permutations.

Usage::

    python bench/bench_analysis_compute.py        # parts at 100,000 q, analyze() at 20,000 q
    python bench/bench_analysis_compute.py --questions 20000 --analyze-questions 5000
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from snapaudit.stats.agreement import per_question_counts
from snapaudit.stats.bootstrap import distinct_rows
from snapaudit.tables import AnswerRef, LabelTable


def best(fn: Callable[[], Any], repeat: int = 3) -> tuple[float, Any]:
    """Best wall time of ``repeat`` calls and the last result."""
    times, out = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def row(name: str, old: float, new: float, same: bool) -> None:
    print(f"{name:<44} old {old:8.4f} s  new {new:8.4f} s  x{old / new:6.1f}  "
          f"{'same bytes' if same else 'DIFFERENT'}")


def label_table(n: int, r: int, rng: np.random.Generator) -> LabelTable:
    """Two judges, every pair of 2r answers of every question, ~5% decisions flipped."""
    refs = [AnswerRef(s, j) for s in ("n0", "n1") for j in range(1, r + 1)]
    a, b = np.triu_indices(len(refs), 1)
    pairs = a.size
    q = np.repeat(np.arange(n), pairs)
    same = rng.random(n * pairs) < 0.8
    other = np.where(rng.random(n * pairs) < 0.05, ~same, same)
    return LabelTable([f"q{i:07d}" for i in range(n)], refs, ["default", "judge1"],
                      np.tile(q, 2), np.tile(np.tile(a, n), 2), np.tile(np.tile(b, n), 2),
                      np.concatenate([same, other]), np.repeat([0, 1], n * pairs))


def old_counts(t: LabelTable, x: str, y: str) -> np.ndarray:
    """per_question_counts before the count tables (sorted keys, intersect1d, bincount)."""
    nr = len(t.refs)
    keys = (t.q.astype(np.int64) * nr + np.minimum(t.a, t.b)) * nr + np.maximum(t.a, t.b)
    got = []
    for judge in (x, y):
        rows = np.flatnonzero(t.for_judge(judge))[::-1]
        uniq, first = np.unique(keys[rows], return_index=True)
        got.append((uniq, t.same[rows[first]]))
    common, ia, ib = np.intersect1d(got[0][0], got[1][0], assume_unique=True,
                                    return_indices=True)
    sa, sb = got[0][1][ia].astype(np.int64), got[1][1][ib].astype(np.int64)
    qq = common // (nr * nr)
    cols = [np.bincount(qq, weights=w, minlength=len(t.questions))
            for w in (np.ones(len(qq)), (sa == sb).astype(np.float64), sa, sb)]
    out = np.column_stack([*cols, (cols[0] == cols[1]).astype(np.float64)])
    kept: np.ndarray = out[out[:, 0] > 0]
    return kept


def parts(n: int, r: int) -> None:
    rng = np.random.default_rng(0)
    t = label_table(n, r, rng)
    old, want = best(lambda: old_counts(t, "default", "judge1"))
    new, got = best(lambda: per_question_counts(t, "default", "judge1"))
    row("judge agreement counts (count tables)", old, new, got.tobytes() == want.tobytes())

    counts = got
    old, (u0, i0) = best(lambda: np.unique(counts, axis=0, return_inverse=True))
    new, (u1, i1) = best(lambda: distinct_rows(counts))
    row(f"distinct rows of the counts (U = {u1.shape[0]})", old, new,
        u0.tobytes() == u1.tobytes() and i0.ravel().tolist() == i1.tolist())

    p = np.bincount(i1) / n
    gen = np.random.Generator(np.random.PCG64(0))
    one, _ = best(lambda: gen.multinomial(n, p, size=1000), repeat=1)
    print(f"{'stream-bound: 50,000 multinomial draws':<44} {50 * one:8.2f} s "
          f"(B x U = 50,000 x {u1.shape[0]} binomials; fixed by the documented stream)")


def analysis(n: int, r: int) -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_analyze_scale import write_tables
    from snapaudit.stats import analysis as module
    from snapaudit.stats.analysis import AnalysisConfig, analyze
    from snapaudit.stats.prefetch import Prefetch
    from snapaudit.tables import read_answers, read_gold, read_labels

    with tempfile.TemporaryDirectory() as tmp:
        paths = write_tables(Path(tmp), n, 2, r, 2, 2)
        rows = read_answers(paths["answers"])
        labels = read_labels(paths["labels"], rows)
        gold = read_gold(paths["gold"])
    config = AnalysisConfig(old="n0", new="n1", draws=50_000, seed=0)

    def timed(fn: Callable[[], Any]) -> tuple[float, float, Any]:
        t, c = time.perf_counter(), time.process_time()
        out = fn()
        return time.perf_counter() - t, time.process_time() - c, out

    seq = timed(lambda: module._analyze(rows, config, labels, gold, Prefetch()).to_json())
    par = timed(lambda: analyze(rows, config=config, labels=labels, gold=gold).to_json())
    print(f"analyze() at {n:,} q x {r} repeats x 2 judges: sequential {seq[0]:.2f} s "
          f"(cpu {seq[1]:.2f}), with workers {par[0]:.2f} s (cpu {par[1]:.2f}): "
          f"x{seq[0] / par[0]:.2f}, {'same results' if seq[2] == par[2] else 'DIFFERENT'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=100_000)
    ap.add_argument("--analyze-questions", type=int, default=20_000)
    ap.add_argument("--repeats", type=int, default=5)
    args = ap.parse_args()
    print(f"load {os.getloadavg()[0]:.2f}; {args.questions:,} questions x {args.repeats} "
          "repeats x 2 judges")
    parts(args.questions, args.repeats)
    if args.analyze_questions:
        analysis(args.analyze_questions, args.repeats)


if __name__ == "__main__":
    main()
