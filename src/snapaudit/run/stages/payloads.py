"""The payloads of answer and judge cells, one builder each: a synchronous call's and a
provider batch result's go through the same code (:mod:`snapaudit.run.stages.batch_calls`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from snapaudit.judge.packets import to_pair_labels
from snapaudit.run.answers import validate_answer
from snapaudit.run.execution.runner import CellResult
from snapaudit.run.stages.keys import AttributionJudgeKey, JudgeKey
from snapaudit.systems.base import AnswerOutcome
from snapaudit.tables import AnswerRef, PairLabel
from snapaudit.tables.records import Step
from snapaudit.tables.steps import parse_steps, steps_record


def answer_result(out: AnswerOutcome, max_bytes: int, latency: bool = True,
                  steps: bool = True) -> CellResult:
    """The accepted payload of one answer, metered (TransportInvalid unless it is a
    nonempty answer of at most ``max_bytes`` UTF-8 bytes). ``doc_hashes`` (the documents'
    content hashes) and ``steps`` (the trajectory) are in the payload only when the system
    reported them, and ``turn_answers`` only for a conversation, so the payloads (and
    locks) of systems that do not are unchanged;
    ``steps=False`` leaves out the trajectory (a counterfactual answer of ``snapaudit
    attribute`` needs none)."""
    validate_answer(out.answer, max_bytes)
    doc_ids = list(out.doc_ids) if out.doc_ids is not None else None
    payload: dict[str, Any] = {"answer": out.answer, "doc_ids": doc_ids}
    if out.doc_hashes is not None:
        payload["doc_hashes"] = list(out.doc_hashes)
    if steps and out.steps is not None:
        payload["steps"] = steps_record(out.steps)
    if out.turn_answers is not None:
        payload["turn_answers"] = list(out.turn_answers)
    return CellResult(payload, dict(out.usage), (out.latency_s or None) if latency else None,
                      dict(out.meta))


def doc_hashes_of(payload: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The content hashes an accepted answer payload recorded (None: none recorded)."""
    hashes = payload.get("doc_hashes")
    return tuple(hashes) if hashes is not None else None


def payload_steps(payload: Mapping[str, Any]) -> tuple[Step, ...] | None:
    """The steps of an accepted answer payload (None: it has none)."""
    raw = payload.get("steps")
    return None if raw is None else parse_steps(raw)


def payload_turns(payload: Mapping[str, Any]) -> tuple[str, ...] | None:
    """The turn answers of an accepted answer payload (None: a single-turn question's)."""
    raw = payload.get("turn_answers")
    return None if raw is None else tuple(raw)


def labels_payload(key: JudgeKey | AttributionJudgeKey, verdict: dict[tuple[str, str], bool],
                   mapping: Mapping[str, AnswerRef], judge: str) -> dict[str, Any]:
    """A judge cell's payload: its pair labels (a split packet's also names its question)."""
    labels = to_pair_labels(key.question_id, verdict, mapping, judge)
    payload: dict[str, Any] = {"question_id": key.question_id} if key.split else {}
    payload["labels"] = [{"a": [x.a.state, x.a.repeat], "b": [x.b.state, x.b.repeat],
                          "same": x.same} for x in labels]
    return payload


def decode_labels(cell_key: str, payload: Mapping[str, Any], judge: str) -> list[PairLabel]:
    """The pair labels of one accepted judge cell."""
    key = JudgeKey.decode(cell_key, payload.get("question_id"))
    items: Sequence[Mapping[str, Any]] = payload.get("labels", [])
    return [PairLabel(key.question_id, AnswerRef(*item["a"]), AnswerRef(*item["b"]),
                      bool(item["same"]), judge) for item in items]
