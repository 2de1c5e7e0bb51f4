"""The one small interface every audited system implements.

A *system* answers one question in one state. The engine owns scheduling,
retries and the ledger; a system only makes one attempt per call and raises
:class:`~snapaudit.errors.TransportInvalid` for a retryable failure.

Systems that expose retrieval (the built-in testbed) also implement
:meth:`RetrievingSystem.retrieve`; the engine then runs the retrieval lock
(two independent passes, compared byte for byte) and hands the locked
evidence back in :attr:`AnswerCall.evidence`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from snapaudit.errors import TransportInvalid
from snapaudit.hashing import sha256_text
from snapaudit.systems.failure import R
from snapaudit.tables.records import Step
from snapaudit.tables.steps import StepsError, parse_steps
from snapaudit.tables.turns import TurnsError, check_count, check_final, parse_texts

Document = tuple[str, str, str]  # (id, url, text)


@dataclass(frozen=True, slots=True)
class Evidence:
    """What retrieval produced for one (question, state): ordered ids and rendered bytes.
    ``documents``: the (id, url, text) records a system that opted in to given evidence
    receives (``snapaudit attribute`` of a Python or HTTP system); empty otherwise."""

    doc_ids: tuple[str, ...]
    rendered: str
    documents: tuple[Document, ...] = ()


@dataclass(frozen=True, slots=True)
class AnswerCall:
    """One attempt at one cell. ``seed`` is derived from the cell key and attempt."""

    question_id: str
    question: str
    state: str
    repeat: int
    attempt: int
    seed: int
    evidence: Evidence | None = None
    # a conversation's user turns, answered in order within the call (None: one question)
    turns: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class AnswerOutcome:
    """A successful attempt: an answer the engine will validate and accept. ``doc_hashes``:
    the SHA-256 of each document's text of ``doc_ids`` (same order), when the system gave the
    texts; recorded with the evidence so that a document whose text changed under the same
    id is told apart (the texts themselves are never stored)."""

    answer: str
    doc_ids: tuple[str, ...] | None = None
    usage: dict[str, int] = field(default_factory=dict)
    latency_s: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict)
    doc_hashes: tuple[str, ...] | None = None
    # the trajectory behind the answer (snapaudit.tables.steps), when the system reports one
    steps: tuple[Step, ...] | None = None
    # a conversation's answers, one per turn of the call (``answer`` is the last)
    turn_answers: tuple[str, ...] | None = None


def text_hashes(doc_ids: Sequence[Any] | None, texts: Any) -> tuple[str, ...] | None:
    """The SHA-256 of each document text a system returned beside its ``doc_ids`` (None
    when it returned none); TransportInvalid("schema") unless they are strings, one per id."""
    if texts is None:
        return None
    if not isinstance(texts, list | tuple) or not all(isinstance(t, str) for t in texts):
        raise TransportInvalid(R.SCHEMA, detail="'doc_texts' must be a list of strings")
    if doc_ids is None or len(texts) != len(doc_ids):
        raise TransportInvalid(R.SCHEMA, detail=f"'doc_texts' holds {len(texts)} text(s) for "
                               f"{len(doc_ids or ())} doc id(s): give one text per id")
    return tuple(sha256_text(t) for t in texts)


def reply_steps(value: Any) -> tuple[Step, ...] | None:
    """A reply's ``steps`` (None: none reported); TransportInvalid("schema") when invalid."""
    if value is None:
        return None
    try:
        return parse_steps(value, ids_as_text=True)
    except StepsError as exc:
        raise TransportInvalid(R.SCHEMA, detail=str(exc)) from None


def reply_turns(answer: Any, value: Any, turns: Sequence[str] | None
                ) -> tuple[Any, tuple[str, ...] | None]:
    """(the final answer, the turn answers) of a reply with ``answer`` (may be None when
    ``value`` is given) and ``turn_answers`` ``value`` to a call of ``turns``:
    TransportInvalid("schema") unless a conversation gets one answer per turn (the last
    equal to a given ``answer``) and a single-turn question none."""
    if turns is None:
        if value is not None:
            raise TransportInvalid(R.SCHEMA, detail="'turn_answers' in the reply to a "
                                   "single-turn question: give 'answer' alone")
        return answer, None
    if value is None:
        raise TransportInvalid(R.SCHEMA, detail=f"no 'turn_answers' in the reply to a "
                               f"conversation of {len(turns)} turn(s): give one answer per turn")
    try:
        texts = parse_texts(value, "turn_answers")
        check_count(texts, len(turns))
        return check_final(texts, answer), texts
    except TurnsError as exc:
        raise TransportInvalid(R.SCHEMA, detail=str(exc)) from None


@runtime_checkable
class System(Protocol):
    """Answers questions in one state of a snapshot."""

    def spec(self) -> dict[str, Any]:
        """Everything about this system that shapes outputs, secret-free; it is hash-bound."""
        ...

    async def answer(self, call: AnswerCall) -> AnswerOutcome:
        """One attempt; raise TransportInvalid on a retryable failure."""
        ...

    async def aclose(self) -> None:
        """Release connections and models."""
        ...


@runtime_checkable
class RetrievingSystem(System, Protocol):
    """A system whose retrieval the engine can lock before any generation."""

    async def retrieve(self, question_id: str, question: str, pass_no: int) -> Evidence | None:
        """Retrieve and render evidence. ``pass_no`` 1 and 2 must use independent,
        initially empty caches. Return None for a state with no retrieval (n0). Awaited on
        the event loop: a retrieval that waits on a service must not block it."""
        ...
