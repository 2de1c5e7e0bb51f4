"""The seeded answer table every example model answers from (no network, no weights).

Each question has a correct answer and a few wrong variants; a model named ``old`` or ``new``
(or any name) answers correctly with probability ``p`` and otherwise picks a variant, from a
``random.Random`` seeded by (model, question, repeat) so the logs are reproducible.
"""

from __future__ import annotations

import hashlib
import random

QUESTIONS = [
    ("q1", "What is the capital of France?", "Paris", ["Lyon", "Marseille"]),
    ("q2", "Who wrote Hamlet?", "William Shakespeare", ["Christopher Marlowe", "Ben Jonson"]),
    ("q3", "What is the chemical symbol of gold?", "Au", ["Ag", "Gd"]),
    ("q4", "How many continents are there?", "7", ["6", "5"]),
    ("q5", "What planet is known as the red planet?", "Mars", ["Jupiter", "Venus"]),
    ("q6", "In which year did the Berlin Wall fall?", "1989", ["1991", "1987"]),
]
ACCURACY = {"old": 0.8, "new": 0.55}
BY_QUESTION = {q: (text, gold, wrong) for q, text, gold, wrong in QUESTIONS}
BY_TEXT = {text: q for q, text, _gold, _wrong in QUESTIONS}


def answer(model: str, question: str, repeat: int) -> tuple[str, list[str]]:
    """(answer, retrieved doc ids) of ``model`` for question id or text ``question``."""
    qid = BY_TEXT.get(question, question)
    _text, gold, wrong = BY_QUESTION[qid]
    seed = int.from_bytes(hashlib.sha256(f"{model}|{qid}|{repeat}".encode()).digest()[:8], "big")
    rng = random.Random(seed)
    p = ACCURACY.get(model, 0.7)
    reply = gold if rng.random() < p else rng.choice(wrong)
    docs = [f"{qid}-d{rng.randrange(4)}", f"{qid}-d{rng.randrange(4, 8)}"]
    return reply, docs
