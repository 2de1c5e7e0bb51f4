"""The typed rows of the answer-table formats: answers, pair labels, gold."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated

import msgspec

MAX_TOOL_CHARS = 256
MAX_STEP_DOC_IDS = 1024


@dataclass(frozen=True, slots=True)
class AnswerRow:
    """One accepted call: question ``question_id`` asked in ``state``, repeat ``repeat``."""

    question_id: str
    state: str
    repeat: int
    answer: str
    doc_ids: tuple[str, ...] | None = None
    question: str | None = None
    # optional cluster label (shared source document, topic, template): the bootstrap then
    # resamples whole clusters (snapaudit.stats.cluster)
    cluster: str | None = None
    # optional content hashes of the documents of ``doc_ids`` (one each, same order): a
    # document whose text changed under the same id is then told apart (stats.overlap)
    doc_hashes: tuple[str, ...] | None = None
    # the agent's trajectory behind the answer, step by step (snapaudit.tables.steps); None:
    # the system reported none (an empty tuple: it reported that it took no step)
    steps: tuple[Step, ...] | None = None
    # a conversation's answers, one per user turn (snapaudit.tables.turns): the last is
    # ``answer``; None: a single-turn question
    turn_answers: tuple[str, ...] | None = None


class Step(msgspec.Struct, frozen=True, forbid_unknown_fields=True, gc=False):
    """One step of a trajectory: the tool called, its input (a search query), the document
    ids it returned, and optionally its output text (stored, never compared). A msgspec
    record, so the typed readers decode a row's steps straight into it (the bounds below are
    checked there; :mod:`snapaudit.tables.steps` checks the rest)."""

    tool: Annotated[str, msgspec.Meta(min_length=1, max_length=MAX_TOOL_CHARS)]
    input: str
    doc_ids: Annotated[tuple[str, ...], msgspec.Meta(max_length=MAX_STEP_DOC_IDS)] = ()
    output: str | None = None


@dataclass(frozen=True, slots=True, order=True)
class AnswerRef:
    """Names one answer of a question: its state and repeat."""

    state: str
    repeat: int


@dataclass(frozen=True, slots=True)
class PairLabel:
    """A judge's decision on whether two answers of one question give the same fact."""

    question_id: str
    a: AnswerRef
    b: AnswerRef
    same: bool
    judge: str = "default"


@dataclass(frozen=True, slots=True)
class GoldRow:
    """Gold aliases of one question (read only after the gold unlock in a run)."""

    question_id: str
    answers: tuple[str, ...]


# Readers, writers and validation. Every bad input raises InputError naming
# the file, the line and the problem; nothing is silently dropped.
