"""What conversations cost ``snapaudit analyze`` (issue 39): the same answers table with and
without ``turn_answers``, at the sizes users run (10,000 questions x 5 turns, 2 states x 2
repeats), read and analyzed in the same run.

Printed: the file sizes (JSONL and Parquet), the read and analyze times of each table and
their ratio to the JSONL table without turn answers (the baseline, measured in this run: the
same final answers, so the same main kernels). The analysis with turns adds the
``conversation`` section: the exact kernel per turn over the questions that have it, each
with its exact whole-question bootstrap.

Usage::

    python bench/bench_conversation.py                    # 10,000 questions x 5 turns
    python bench/bench_conversation.py --questions 2000 --turns 3 --answer-bytes 4096
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from bench_trajectory import measure, print_ratios  # bench/ is the script's folder
from snapaudit import AnalysisConfig
from snapaudit.stats.gate import GateConfig
from snapaudit.tables import AnswerRow


def rows(n: int, turns: int, answer_bytes: int, seed: int = 0) -> list[AnswerRow]:
    """Conversations of ``turns`` turns: new changes 1 in 10 answers of each turn (drawn per
    question and turn); repeats differ in 1 in 20 answers of the last turn."""
    rng = np.random.default_rng(seed)
    pad = "x" * max(0, answer_bytes - 24)
    out = []
    for i in range(n):
        q = f"q{i:06d}"
        flips = rng.random(turns) < 0.1
        for state in ("old", "new"):
            new = state == "new"
            for r in (1, 2):
                noise = rng.random() < 0.05
                answers = tuple(f"{'B' if new and flips[j] else 'A'}{i} t{j}"
                                f"{' v2' if noise and j == turns - 1 else ''} {pad}"
                                for j in range(turns))
                out.append(AnswerRow(q, state, r, answers[-1], turn_answers=answers))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--answer-bytes", type=int, default=512, help="per turn answer")
    args = parser.parse_args()
    table = rows(args.questions, args.turns, args.answer_bytes)
    plain = [AnswerRow(r.question_id, r.state, r.repeat, r.answer) for r in table]
    config = AnalysisConfig(old="old", new="new", draws=10_000, permutations=0,
                            gate=GateConfig(profile="exact-only"))
    with tempfile.TemporaryDirectory() as tmp:
        results = measure(Path(tmp), config, (("without turns", plain, "jsonl"),
                                              ("with turns", table, "jsonl"),
                                              ("parquet plain", plain, "parquet"),
                                              ("parquet turns", table, "parquet")))
    print(f"{args.questions:,} questions x {args.turns} turns x 2 states x 2 repeats, "
          f"{args.answer_bytes} B answers per turn")
    print_ratios(results)
    section = results["with turns"][3].conversation
    assert section == results["parquet turns"][3].conversation
    for name, t in [*((str(t.turn), t) for t in section.turns), ("final", section.final)]:
        k = t.exact
        print(f"  turn {name:<5} within {k.within:6.2f}  cross {k.cross:6.2f}  "
              f"D {k.d_hat:+6.2f} pp [{k.ci95[0]:+.2f}, {k.ci95[1]:+.2f}] ({k.method})")


if __name__ == "__main__":
    main()
