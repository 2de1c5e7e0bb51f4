"""The judge prompt for long-form answers: the same substantive answer, whatever the wording.

Same blind packet and user message as the short-answer prompt (:mod:`snapaudit.judge.prompt`);
only the instructions differ. Versioned and hash-bound like the short one.
"""

from __future__ import annotations

from typing import Any

from snapaudit.hashing import sha256_json
from snapaudit.judge.prompt import USER_TEMPLATE

PROMPT_VERSION = "snapaudit/judge-prompt-long/v1"

SYSTEM = (
    "You compare long-form answers to one question, such as a RAG assistant's paragraphs. "
    "For every listed pair of answers, decide whether the two give the same substantive "
    "answer to the question: the same final answer, decision or key facts. Ignore wording, "
    "length, order, formatting, tone, hedging and citations or source lists. Treat a "
    "different final answer, decision or recommendation, a different or contradicting key "
    "fact (entity, number, date, condition, step), or a refusal versus an answer as "
    "different. Two refusals are the same. Judge only the texts as written; do not decide "
    "which answer is correct. Reply with JSON only, in the form "
    '{"pairs": [{"a": "A", "b": "B", "same": true}, ...]}, one entry for every listed pair, '
    "each exactly once."
)


def prompt_spec() -> dict[str, Any]:
    """The long-form prompt's version and SHA-256 (system text and user template together)."""
    body = {"version": PROMPT_VERSION, "system": SYSTEM, "user_template": USER_TEMPLATE}
    return {"version": PROMPT_VERSION, "sha256": sha256_json(body)}
