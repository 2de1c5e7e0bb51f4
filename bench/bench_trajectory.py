"""What an agent's steps cost ``snapaudit analyze`` (issue 39): the same answers table with
and without ``steps``, at the sizes users run (10,000 questions, 2 states x 2 repeats, 4 KB
answers, 3 steps of a search agent per answer), read and analyzed in the same run.

Printed: the file sizes (JSONL and Parquet), the read and analyze times of each table and
their ratio to the JSONL table without steps (the baseline, measured in this run), and the
checking reader's time on that table. The column readers keep a table's steps as a column
(JSONL: msgspec decodes them typed; Parquet: read field by field, tables/stepcolumn.py); the
analysis adds the three trajectory kernels, their bootstrap and the diagnostics.

Usage::

    python bench/bench_trajectory.py                     # 10,000 questions
    python bench/bench_trajectory.py --questions 2000 --answer-bytes 512
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from snapaudit import AnalysisConfig, analyze
from snapaudit.stats.gate import GateConfig
from snapaudit.tables import AnswerRow, read_answers, write_answers
from snapaudit.tables.records import Step


def timed(fn: Callable[[], Any], repeat: int = 2) -> tuple[float, Any]:
    """The best wall time of ``repeat`` calls (the first warms caches) and the result."""
    best, out = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


def rows(n: int, answer_bytes: int, seed: int = 0) -> list[AnswerRow]:
    """A search agent: query, read, reformulated query; new changes 1 in 10 answers, 1 in 5
    second queries and 1 in 3 document lists; repeats differ in 1 in 20 first queries."""
    rng = np.random.default_rng(seed)
    pad = "x" * max(0, answer_bytes - 16)
    out = []
    for i in range(n):
        q = f"q{i:06d}"
        flip, reform, docs = rng.random() < 0.1, rng.random() < 0.2, rng.random() < 0.33
        for state in ("old", "new"):
            new = state == "new"
            for r in (1, 2):
                first = f"who wrote item {i}" + (" book" if rng.random() < 0.05 else "")
                ids = tuple(f"d{i}-{k + (5 if new and docs else 0)}" for k in range(5))
                steps = (Step("search", first, ids, output="5 hits"),
                         Step("read", ids[0], (ids[0],)),
                         Step("search", f"{ids[0]} author" + (" v2" if new and reform else ""),
                              ids[2:4]))
                answer = f"{'B' if new and flip else 'A'}{i} {pad}"
                out.append(AnswerRow(q, state, r, answer, steps=steps))
    return out


Measured = dict[str, tuple[int, float, float, Any]]  # name: (bytes, read s, analyze s, result)


def measure(tmp: Path, config: AnalysisConfig,
            tables: Sequence[tuple[str, list[AnswerRow], str]]) -> Measured:
    """Each named table written (its extension's format), read and analyzed, best of two."""
    results: Measured = {}
    for name, data, ext in tables:
        path = tmp / f"{name.replace(' ', '_')}.{ext}"
        write_answers(path, data)
        read_s, read = timed(lambda p=path: read_answers(p))  # type: ignore[misc]
        analyze_s, result = timed(lambda r=read: analyze(r, config=config))  # type: ignore[misc]
        results[name] = (path.stat().st_size, read_s, analyze_s, result)
    return results


def print_ratios(results: Measured) -> None:
    """Size, read and analyze time of each table, and their ratio to the first's."""
    base = next(iter(results.values()))
    for name, (size, read_s, analyze_s, _) in results.items():
        print(f"{name:<14} {size / 2**20:7.1f} MiB  read {read_s:6.2f} s (x{read_s / base[1]:5.2f})"
              f"  analyze {analyze_s:6.2f} s (x{analyze_s / base[2]:5.2f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--answer-bytes", type=int, default=4096)
    args = parser.parse_args()
    table = rows(args.questions, args.answer_bytes)
    plain = [AnswerRow(r.question_id, r.state, r.repeat, r.answer) for r in table]
    config = AnalysisConfig(old="old", new="new", draws=10_000, permutations=0,
                            gate=GateConfig(profile="exact-only"))
    with tempfile.TemporaryDirectory() as tmp:
        results = measure(Path(tmp), config, (("without steps", plain, "jsonl"),
                                              ("with steps", table, "jsonl"),
                                              ("parquet plain", plain, "parquet"),
                                              ("parquet steps", table, "parquet")))
        checking, _ = timed(lambda: read_answers(Path(tmp) / "without_steps.jsonl",
                                                 fast=False))
    base = results["without steps"]
    print(f"{args.questions:,} questions x 2 states x 2 repeats, {args.answer_bytes} B answers, "
          "3 steps each")
    print_ratios(results)
    print(f"the checking reader on the table without steps: {checking:.2f} s "
          f"(x{checking / base[1]:.2f})")
    section = results["with steps"][3].trajectory
    for kernel, k in section.kernels.items():
        print(f"  {kernel:<9} within {k.within:6.2f}  cross {k.cross:6.2f}  D {k.d_hat:+6.2f} pp "
              f"[{k.ci95[0]:+.2f}, {k.ci95[1]:+.2f}] ({k.method})")
    c = section.changed_pairs
    print(f"  changed pairs {c.total:,}: same queries {c.same_queries:,}, different "
          f"{c.different_queries:,}")


if __name__ == "__main__":
    main()
