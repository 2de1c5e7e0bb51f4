"""The demo world: a small invented encyclopedia over 7 nested shards with planted changes.

Everything is generated from a seed; no text is copied from anywhere. Each question is about
one invented subject and carries one *plant*, the kind of change its evidence goes through as
the corpus grows from shard 1 (``n1``) to shards 1-7 (``n7``):

``stable``          its supporting document is in shard 1 and nothing about it is ever added;
``distractor``      later shards add documents about the subject that do not state the answer:
                    the top-k changes, the answer should not;
``regression``      later shards (4-7) add documents stating a different, plausible answer;
``recovery``        no evidence in shard 1 (UNKNOWN expected), evidence arrives in shards 2-7;
``second_reading``  the question is underspecified; a later shard adds a second edition
                    with a different winner (gold accepts both readings).

Documents are placed in shards by the same seeded hash of the document id that the corpus
stage uses, by choosing an id suffix that lands in the intended shard (``shard_of``).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

from snapaudit.demo.names import NameMaker
from snapaudit.demo.topics import CUPS, TOPICS, Topic

N_SHARDS = 7
PLANT_KINDS = ("stable", "distractor", "regression", "recovery", "second_reading")
# Share of each plant in the world, in PLANT_KINDS order.
_MIX = (0.25, 0.20, 0.25, 0.20, 0.10)
EXPECTED = {
    "stable": "no flip: same evidence, same answer",
    "distractor": "top-k changes, no flip",
    "regression": "strict flip n1->n7; EM match -> nonmatch",
    "recovery": "strict flip n1->n7; UNKNOWN -> gold (EM nonmatch -> match)",
    "second_reading": "strict flip n1->n7; EM unchanged (gold accepts both readings)",
}
FLIP_KINDS = frozenset({"regression", "recovery", "second_reading"})

ShardOf = Callable[[str], int]


def hashed_shard_of(seed: int, n_shards: int = N_SHARDS) -> ShardOf:
    """0-based shard of a document id, exactly as the corpus stage assigns it."""
    from snapaudit.testbed.corpus.build import shard_of as corpus_shard_of

    def shard_of(doc_id: str) -> int:
        return corpus_shard_of(doc_id, seed, n_shards)

    return shard_of


_DISTRACT = (
    "Postcards of {s} are sold at every kiosk nearby.",
    "Visitors photograph {s} most often in spring.",
    "A small model of {s} stands in a local museum.",
)
_CONFLICT = (
    "Updated record: {support} Older guides are mistaken.",
    "Archive note on {s}: {support}",
)
_FILLER = (
    "{w} is a quiet village known for its orchards and stone walls.",
    "Markets at {w} sell honey, wool and dried figs.",
    "{w} is a card game played with forty cards.",
    "A lantern festival at {w} marks autumn each year.",
    "{w} bakers use rye flour and caraway seeds.",
    "{w} ferns grow on shaded slopes near {v}.",
)


@dataclass
class World:
    """The generated world: documents, questions, gold aliases and plants."""

    seed: int
    docs: list[dict[str, str]] = field(default_factory=list)
    doc_shards: dict[str, int] = field(default_factory=dict)  # 1-based
    questions: list[dict[str, str]] = field(default_factory=list)
    gold: list[dict[str, object]] = field(default_factory=list)
    plants: dict[str, dict[str, object]] = field(default_factory=dict)


class _Builder:
    def __init__(self, seed: int, shard_of: ShardOf) -> None:
        self.rng = random.Random(seed)
        self.names = NameMaker(self.rng)
        self.shard_of = shard_of
        self.world = World(seed=seed)
        self._n = 0

    def add_doc(self, text: str, shard: int) -> str:
        """Add a document landing in 1-based ``shard``; returns its id."""
        self._n += 1
        suffix = 0
        while True:
            doc_id = f"d{self._n:04d}{chr(97 + suffix % 26)}{suffix // 26 or ''}"
            if self.shard_of(doc_id) == shard - 1:
                break
            suffix += 1
        self.world.docs.append(
            {"id": doc_id, "url": f"https://demo.example/{doc_id}", "text": text})
        self.world.doc_shards[doc_id] = shard
        return doc_id

    def answer(self, kind: str) -> str:
        if kind == "person":
            return self.names.person()
        if kind == "year":
            return self.names.year()
        return self.names.word(2)

    def later(self, low: int = 4) -> int:
        return self.rng.randint(low, N_SHARDS)


def _aliases(topic: Topic, answer: str) -> list[str]:
    if topic.kind == "town":
        return [answer, f"{answer} River", f"the {answer} River"]
    if topic.answer == "person":
        return [answer, answer.split()[-1]]
    return [answer]


def _plant_question(b: _Builder, qid: str, plant: str, topic: Topic) -> None:
    subject = topic.subject.format(w=b.names.word(2))
    question = topic.question.format(s=subject)
    gold = b.answer(topic.answer)
    docs: list[str] = []
    aliases = _aliases(topic, gold)
    detail: dict[str, object] = {}
    if plant == "second_reading":
        y1, y2 = sorted((b.names.year(), b.names.year()))
        other = b.answer(topic.answer)
        docs.append(b.add_doc(topic.support.format(s=subject, a=gold, y=y1), 1))
        text = topic.support.format(s=subject, a=other, y=y2) + " It is the latest edition."
        docs.append(b.add_doc(text, b.later()))
        aliases += _aliases(topic, other)
        detail = {"readings": [y1, y2], "second_answer": other}
    elif plant == "recovery":
        docs.append(b.add_doc(topic.support.format(s=subject, a=gold), b.later(2)))
    else:
        docs.append(b.add_doc(topic.support.format(s=subject, a=gold), 1))
    if plant == "regression":
        wrong = b.answer(topic.answer)
        support = topic.support.format(s=subject, a=wrong)
        for template in _CONFLICT:
            docs.append(b.add_doc(template.format(s=subject, support=support), b.later()))
        detail = {"planted_answer": wrong}
    if plant == "distractor":
        for template in b.rng.sample(_DISTRACT, 2):
            docs.append(b.add_doc(template.format(s=subject), b.later(2)))
    b.world.questions.append({"id": qid, "question": question})
    b.world.gold.append({"question_id": qid, "answers": aliases})
    b.world.plants[qid] = {
        "kind": plant, "topic": topic.kind, "expected": EXPECTED[plant],
        "expect_flip": plant in FLIP_KINDS, "doc_ids": docs,
        "shards": [b.world.doc_shards[d] for d in docs], **detail,
    }


def _plan(n_questions: int, rng: random.Random) -> list[str]:
    counts = [max(1, round(share * n_questions)) for share in _MIX]
    while sum(counts) > n_questions:
        counts[counts.index(max(counts))] -= 1
    while sum(counts) < n_questions:
        counts[0] += 1
    kinds = [k for k, c in zip(PLANT_KINDS, counts, strict=True) for _ in range(c)]
    rng.shuffle(kinds)
    return kinds


def _draw(rng: random.Random, topics: tuple[Topic, ...], count: int) -> list[Topic]:
    """``count`` topics without replacement (a fresh shuffled round only once all are used)."""
    drawn: list[Topic] = []
    while len(drawn) < count:
        drawn += rng.sample(topics, len(topics))
    return drawn[:count]


def build_world(n_questions: int = 32, seed: int = 7, *, fillers_per_shard: int = 6,
                shard_of: ShardOf | None = None) -> World:
    """Generate the world. ``shard_of`` maps a document id to its 0-based shard; by default
    :func:`hashed_shard_of` with the same seed. Identical arguments give identical worlds."""
    if n_questions < len(PLANT_KINDS):
        raise ValueError(f"the demo needs at least {len(PLANT_KINDS)} questions")
    b = _Builder(seed, shard_of or hashed_shard_of(seed))
    plan = _plan(n_questions, b.rng)
    ordinary = _draw(b.rng, TOPICS, sum(p != "second_reading" for p in plan))
    cups = _draw(b.rng, CUPS, plan.count("second_reading"))
    for i, plant in enumerate(plan, start=1):
        topic = cups.pop() if plant == "second_reading" else ordinary.pop()
        _plant_question(b, f"q{i:03d}", plant, topic)
    for shard in range(1, N_SHARDS + 1):
        for _ in range(fillers_per_shard):
            template = b.rng.choice(_FILLER)
            b.add_doc(template.format(w=b.names.word(2), v=b.names.word(2)), shard)
    order = sorted(b.world.docs, key=lambda d: (b.world.doc_shards[d["id"]], d["id"]))
    b.world.docs = order
    return b.world
