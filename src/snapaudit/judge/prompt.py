"""The judge prompt: blind, one question, anonymous answers, a same/different per pair."""

from __future__ import annotations

from typing import Any

from snapaudit.hashing import sha256_json
from snapaudit.judge.base import JudgePacket

PROMPT_VERSION = "snapaudit/judge-prompt/v1"

SYSTEM = (
    "You compare short answers to one question. For every listed pair of answers, decide "
    "whether the two strings give the same factual answer to the question. Treat reasonable "
    "aliases, abbreviations, spellings, formatting, units written differently, and a full "
    "sentence that states the same answer as the same. Treat different entities, different "
    "numbers or dates, a more or less specific different answer, and a refusal versus an "
    "answer as different. Two refusals or two 'unknown' answers are the same. Judge only the "
    "strings as written; do not decide which answer is correct. Reply with JSON only, in "
    'the form {"pairs": [{"a": "A", "b": "B", "same": true}, ...]}, one entry for every '
    "listed pair, each exactly once."
)

USER_TEMPLATE = "Question: {question}\n\nAnswers:\n{answers}\n\nPairs to decide:\n{pairs}\n"


def render_user(packet: JudgePacket) -> str:
    """The user message: the question, the labelled answers and the pairs, nothing else."""
    answers = "\n".join(
        f"{label}: {_one_line(text)}" for label, text in zip(packet.labels, packet.answers,
                                                               strict=True)
    )
    pairs = " ".join(f"{a}-{b}" for a, b in packet.pairs)
    return USER_TEMPLATE.format(question=_one_line(packet.question), answers=answers,
                                pairs=pairs)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def prompt_spec() -> dict[str, Any]:
    """The prompt's version and SHA-256 (system text and user template together)."""
    body = {"version": PROMPT_VERSION, "system": SYSTEM, "user_template": USER_TEMPLATE}
    return {"version": PROMPT_VERSION, "sha256": sha256_json(body)}
