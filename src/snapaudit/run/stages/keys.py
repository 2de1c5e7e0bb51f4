"""Cell keys: one frozen record per stage kind, with the one codec of its ledger string.

The stored strings are ``qid|state|repeat`` (answer cells, also ``replicate:*:answer``),
``qid|state|pN`` (retrieval cells), ``qid`` or ``qid#k/n`` (judge cells; a split
packet's payload names its question, so a question id may itself hold ``#`` or ``|``),
``qid|variant|repeat`` (the attribution's counterfactual answers) and ``qid|variant`` (their
judge packets). Nothing else in ``snapaudit`` builds or splits these strings.

A cell built by a stage carries the endpoint it calls (:class:`~snapaudit.run.stages.base.Cell`);
:func:`endpoint_of` gives the same endpoint back from a stored key, for what reads the ledger
afterwards (``snapaudit status``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


def _three(text: str, what: str) -> tuple[str, str, str]:
    parts = text.rsplit("|", 2)
    if len(parts) != 3:
        raise ValueError(f"not a{what} cell key: {text!r}")
    return parts[0], parts[1], parts[2]


@dataclass(frozen=True, slots=True, order=True)
class AnswerKey:
    """One answer: a question, a state, a repeat (``qid|state|repeat``)."""

    question_id: str
    state: str
    repeat: int

    def encode(self) -> str:
        return f"{self.question_id}|{self.state}|{self.repeat}"

    def fields(self) -> dict[str, Any]:
        """The key as its cells' requests name it."""
        return {"question_id": self.question_id, "state": self.state, "repeat": self.repeat}

    @classmethod
    def decode(cls, text: str) -> AnswerKey:
        qid, state, rep = _three(text, "n answer")
        if not rep.isdigit():
            raise ValueError(f"not an answer cell key: {text!r}")
        return cls(qid, state, int(rep))


@dataclass(frozen=True, slots=True, order=True)
class RetrievalKey:
    """One retrieval pass of a question in a state (``qid|state|pN``)."""

    question_id: str
    state: str
    pass_no: int

    def encode(self) -> str:
        return f"{self.question_id}|{self.state}|p{self.pass_no}"

    def fields(self) -> dict[str, Any]:
        return {"question_id": self.question_id, "state": self.state, "pass": self.pass_no}

    def pair(self) -> str:
        """The key without its pass (``qid|state``), as error messages name a cell pair."""
        return f"{self.question_id}|{self.state}"

    @classmethod
    def decode(cls, text: str) -> RetrievalKey:
        qid, state, pass_no = _three(text, " retrieval")
        if not (pass_no.startswith("p") and pass_no[1:].isdigit()):
            raise ValueError(f"not a retrieval cell key: {text!r}")
        return cls(qid, state, int(pass_no[1:]))


@dataclass(frozen=True, slots=True, order=True)
class JudgeKey:
    """One judge packet of a question: ``qid``, or ``qid#part/parts`` when it was split."""

    question_id: str
    part: int = 1
    parts: int = 1

    @property
    def split(self) -> bool:
        return self.parts > 1

    def encode(self) -> str:
        return f"{self.question_id}#{self.part}/{self.parts}" if self.split else \
            self.question_id

    def fields(self) -> dict[str, Any]:
        return {"question_id": self.question_id}

    @classmethod
    def decode(cls, text: str, named: str | None = None) -> JudgeKey:
        """``named`` is the question id a split packet's payload names (None: not split)."""
        if named is None:
            return cls(text)
        suffix = text.removeprefix(named)
        part, sep, parts = suffix.removeprefix("#").partition("/")
        if suffix == text or not suffix.startswith("#") or not sep \
                or not part.isdigit() or not parts.isdigit():
            raise ValueError(f"not a split judge cell key of {named!r}: {text!r}")
        return cls(named, int(part), int(parts))


@dataclass(frozen=True, slots=True, order=True)
class AttributionKey:
    """One counterfactual answer: a question, an evidence variant, a repeat
    (``qid|variant|repeat``)."""

    question_id: str
    variant: str
    repeat: int

    def encode(self) -> str:
        return f"{self.question_id}|{self.variant}|{self.repeat}"

    def fields(self) -> dict[str, Any]:
        return {"question_id": self.question_id, "variant": self.variant, "repeat": self.repeat}

    @classmethod
    def decode(cls, text: str) -> AttributionKey:
        qid, variant, rep = _three(text, "n attribution")
        if not rep.isdigit():
            raise ValueError(f"not an attribution cell key: {text!r}")
        return cls(qid, variant, int(rep))


@dataclass(frozen=True, slots=True, order=True)
class AttributionJudgeKey:
    """The judge packet of one variant of a question (``qid|variant``); never split."""

    question_id: str
    variant: str

    @property
    def split(self) -> bool:
        return False

    def encode(self) -> str:
        return f"{self.question_id}|{self.variant}"

    def fields(self) -> dict[str, Any]:
        return {"question_id": self.question_id, "variant": self.variant}

    @classmethod
    def decode(cls, text: str) -> AttributionJudgeKey:
        qid, sep, variant = text.rpartition("|")
        if not sep:
            raise ValueError(f"not an attribution judge cell key: {text!r}")
        return cls(qid, variant)


CellKey = AnswerKey | RetrievalKey | JudgeKey | AttributionKey | AttributionJudgeKey

# the stages whose cells each call their state's own system
PER_STATE: dict[str, type[AnswerKey] | type[RetrievalKey]] = {"answer": AnswerKey,
                                                              "retrieval": RetrievalKey}


def endpoint_of(stage: str, cell_key: str) -> str:
    """The endpoint a stored cell of ``stage`` was sent to: the state of an ``answer`` or
    ``retrieval`` cell (each state's own system), else the stage (one endpoint: a judge, the
    replication's or the attribution's generator); an unparseable key: the stage."""
    codec = PER_STATE.get(stage)
    if codec is None:
        return stage
    try:
        return codec.decode(cell_key).state
    except ValueError:
        return stage
