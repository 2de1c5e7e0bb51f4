"""Conversations: a question asked as a fixed list of user turns, one answer per turn.

A cohort question may carry ``turns`` (the user's turns, in order); the system answers each
turn within one call and replies ``turn_answers``, one per turn, the last being the final
answer (an answer row's ``answer``). :func:`parse_texts` checks either list and raises
:class:`TurnsError` with a one-line message (the caller adds where: the cohort line, a
transport-invalid attempt, or the table's file and line). The bounds keep one answer cell
small enough for the ledger: at most :data:`MAX_TURNS` turns of at most
:data:`MAX_TURN_BYTES` UTF-8 bytes each.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import msgspec

MAX_TURNS = 64
MAX_TURN_BYTES = 64 << 10  # one turn's text (a user turn or its answer), UTF-8

# a row's ``turn_answers`` as msgspec checks it (snapaudit.tables.jsonl; the rest by
# :func:`fits`)
TURN_ANSWERS = Annotated[tuple[str, ...], msgspec.Meta(min_length=1, max_length=MAX_TURNS)]


class TurnsError(ValueError):
    """A ``turns`` or ``turn_answers`` value that does not hold (the message is one line)."""


def parse_texts(value: Any, name: str) -> tuple[str, ...]:
    """``value`` as a conversation's texts: a non-empty list (at most :data:`MAX_TURNS`) of
    strings, each with a non-space character and at most :data:`MAX_TURN_BYTES` bytes."""
    if not isinstance(value, list | tuple):
        raise TurnsError(f"'{name}' must be a list of strings, got {type(value).__name__}")
    if not value:
        raise TurnsError(f"'{name}' is empty: give at least one turn")
    if len(value) > MAX_TURNS:
        raise TurnsError(f"'{name}' has {len(value)} turns; at most {MAX_TURNS}")
    for i, text in enumerate(value):
        if not isinstance(text, str):
            raise TurnsError(f"{name}[{i}] must be a string, got {type(text).__name__}")
        if not text.strip():
            raise TurnsError(f"{name}[{i}] is blank: each turn needs a non-space character")
        size = len(text.encode("utf-8", "surrogatepass"))
        if size > MAX_TURN_BYTES:
            raise TurnsError(f"{name}[{i}] has {size} bytes; at most {MAX_TURN_BYTES}")
    return tuple(value)


def fits(texts: Sequence[str]) -> bool:
    """Whether texts msgspec decoded (count bounded) are non-blank and within the size bound
    (the fast readers' check; :func:`parse_texts` names the problem)."""
    return all(t.strip() and (len(t) <= MAX_TURN_BYTES // 4  # 4 bytes a character at most
                              or len(t.encode("utf-8", "surrogatepass")) <= MAX_TURN_BYTES)
               for t in texts)


def check_final(turn_answers: Sequence[str], answer: str | None) -> str:
    """The final answer of ``turn_answers`` (the last); :class:`TurnsError` when ``answer``
    is given and differs from it."""
    last = turn_answers[-1]
    if answer is not None and answer != last:
        raise TurnsError("'answer' must equal the last of 'turn_answers' (the final turn's "
                         "answer), or be left out")
    return last


def check_count(turn_answers: Sequence[str], turns: int) -> None:
    """:class:`TurnsError` unless there is exactly one answer per turn."""
    if len(turn_answers) != turns:
        raise TurnsError(f"'turn_answers' has {len(turn_answers)} answer(s) for {turns} "
                         "turn(s): give exactly one answer per turn")
