"""A simulated run of the demo world: answers that follow each plant, without any model.

For tests and for a quick look at the report: the answers are what an ideal reader of the
world's evidence would say, with seeded repeat noise, and the labels are what a judge
comparing normalized answers would give. Nothing here is presented as a measurement.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from itertools import combinations

from snapaudit.demo.world import World
from snapaudit.stats.normalize import normalize_nq
from snapaudit.tables import AnswerRef, AnswerRow, PairLabel

STATES = {"n0": 0, "n1": 1, "n3": 3, "n7": 7}


def _truth(world: World, qid: str, shards: int) -> str:
    """What the evidence of the first ``shards`` shards supports for question ``qid``."""
    plant = world.plants[qid]
    gold = next(g for g in world.gold if g["question_id"] == qid)["answers"]
    assert isinstance(gold, list)
    first = min(plant["shards"]) if isinstance(plant["shards"], list) else 1  # type: ignore[type-var]
    later = max(plant["shards"]) if isinstance(plant["shards"], list) else 1  # type: ignore[type-var]
    kind = plant["kind"]
    if shards == 0 or (kind == "recovery" and shards < first):
        return "UNKNOWN"
    if kind == "regression" and shards >= later:
        return str(plant["planted_answer"])
    if kind == "second_reading" and shards >= later:
        return str(plant["second_answer"])
    return str(gold[0])


def _tokens(text: str) -> set[str]:
    return {t for t in normalize_nq(text).split() if len(t) > 3}


def overlap_top_k(world: World, question: str, shards: int, k: int = 8) -> tuple[str, ...]:
    """A stand-in retriever: documents of the prefix ranked by shared words, then id."""
    if shards == 0:
        return ()
    words = _tokens(question)
    scored = [(-len(words & _tokens(d["text"])), d["id"]) for d in world.docs
              if world.doc_shards[d["id"]] <= shards]
    return tuple(doc_id for _, doc_id in sorted(scored)[:k])


def simulate_answers(world: World, states: dict[str, int] | None = None, repeats: int = 2,
                     seed: int = 0, noise: float = 0.1) -> list[AnswerRow]:
    """Answers per (question, state, repeat); with probability ``noise`` a repeat says
    UNKNOWN instead (same-state disagreement)."""
    rng = random.Random(seed)
    states = states or STATES
    questions = {q["id"]: q["question"] for q in world.questions}
    rows = []
    for qid, question in questions.items():
        for state, shards in states.items():
            truth = _truth(world, qid, shards)
            docs = overlap_top_k(world, question, shards) if shards else None
            for repeat in range(1, repeats + 1):
                answer = "UNKNOWN" if rng.random() < noise else truth
                rows.append(AnswerRow(qid, state, repeat, answer, docs, question))
    return rows


def rule_labels(rows: Sequence[AnswerRow], judge: str = "rule") -> list[PairLabel]:
    """All pairs of each question, same iff the normalized answers are equal."""
    by_q: dict[str, list[AnswerRow]] = {}
    for row in rows:
        by_q.setdefault(row.question_id, []).append(row)
    labels = []
    for qid, answers in by_q.items():
        for a, b in combinations(answers, 2):
            labels.append(PairLabel(qid, AnswerRef(a.state, a.repeat), AnswerRef(b.state, b.repeat),
                                    normalize_nq(a.answer) == normalize_nq(b.answer), judge))
    return labels
