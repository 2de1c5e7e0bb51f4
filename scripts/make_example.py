"""Generate the shipped example: answers, pair labels (two judges) and gold for 4 states.

A synthetic, seeded world (no real data): each question has a gold fact, a few wrong facts and
surface variants of each. Across the ordered states n0 -> n1 -> n3 -> n7 a question's modal
fact may drift; repeats sometimes produce a surface variant (same fact, different string) or
a different fact. The primary judge labels by the underlying fact; a second judge labels a
sample of questions and disagrees on a few pairs. Usage::

    python scripts/make_example.py [OUT_DIR] [--questions N] [--seed S]
"""

from __future__ import annotations

import argparse
import random
from itertools import combinations
from pathlib import Path

from snapaudit.tables import (
    AnswerRef,
    AnswerRow,
    PairLabel,
    write_answers,
    write_gold,
    write_labels,
)

STATES = ("n0", "n1", "n3", "n7")
WORDS = ("amber", "basalt", "cedar", "delta", "ember", "fjord", "garnet", "harbor", "iris",
         "juniper", "kestrel", "lagoon", "marble", "nectar", "onyx", "prairie", "quartz",
         "raven", "sierra", "tundra", "umber", "violet", "willow", "yarrow", "zephyr")


def _fact(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS).capitalize() for _ in range(rng.choice((1, 2))))


def _variant(fact: str, rng: random.Random) -> str:
    """A different string for the same fact (exact kernel: different; judge: same)."""
    return rng.choice((f"{fact} Island", f"probably {fact}", f"{fact} (approx.)",
                       f"It is {fact}"))


def _question(q: int, rng: random.Random) -> tuple[list[AnswerRow], list[PairLabel], list[str]]:
    qid = f"q{q:04d}"
    facts = [_fact(rng) for _ in range(4)]
    facts = list(dict.fromkeys(facts)) + [f"Fact {q}-{j}" for j in range(4)]
    gold = [facts[0], facts[0].upper()]
    mode = 0 if rng.random() < 0.55 else rng.randrange(1, 4)
    pool = [f"d{q:04d}-{j}" for j in range(12)]
    docs = pool[:5]
    rows: list[AnswerRow] = []
    fact_of: dict[AnswerRef, int] = {}
    for si, state in enumerate(STATES):
        if si > 0 and rng.random() < (0.03, 0.05, 0.07)[si - 1]:
            mode = rng.choice([m for m in range(4) if m != mode])
        if si > 0:
            docs = [d if rng.random() > 0.25 * si else rng.choice(pool) for d in docs]
            docs = list(dict.fromkeys(docs))
        for rep in (1, 2):
            f = mode if rng.random() > 0.12 else rng.randrange(0, 6)
            text = facts[f] if rng.random() > 0.15 else _variant(facts[f], rng)
            if si == 0 and rng.random() < 0.1:
                f, text = 99, "UNKNOWN"
            fact_of[AnswerRef(state, rep)] = f
            rows.append(AnswerRow(qid, state, rep, text, tuple(docs) if si else (),
                                  f"Synthetic question {q}?"))
    labels = []
    second = rng.random() < 0.15
    for a, b in combinations(sorted(fact_of), 2):
        same = fact_of[a] == fact_of[b]
        labels.append(PairLabel(qid, a, b, same, "default"))
        if second:
            labels.append(PairLabel(qid, a, b, same if rng.random() > 0.015 else not same,
                                    "second"))
    return rows, labels, gold


def make(out: Path, questions: int = 240, seed: int = 20261130) -> None:
    rng = random.Random(seed)
    rows: list[AnswerRow] = []
    labels: list[PairLabel] = []
    gold: dict[str, tuple[str, ...]] = {}
    for q in range(questions):
        r, lab, g = _question(q, rng)
        rows += r
        labels += lab
        gold[f"q{q:04d}"] = tuple(g)
    out.mkdir(parents=True, exist_ok=True)
    write_answers(out / "answers.jsonl", rows)
    write_labels(out / "labels.jsonl", labels)
    write_gold(out / "gold.jsonl", gold)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="?", default="examples", type=Path)
    parser.add_argument("--questions", type=int, default=240)
    parser.add_argument("--seed", type=int, default=20261130)
    args = parser.parse_args()
    make(args.out, args.questions, args.seed)


if __name__ == "__main__":
    main()
