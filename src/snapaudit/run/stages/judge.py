"""Judge cells: one per blind packet of a question, for every stage that judges answers
(the semantic stage, the judge audit, replication).

The request is ``{"question_id", "judge": judge.spec(), "packet": sha256(packet)}``; the
call goes through the metered path (:func:`snapaudit.judge.base.judge_with_usage`), so the
tokens of every judge stage reach ``usage`` in ``results.json``. Payloads are built by
:func:`~snapaudit.run.stages.payloads.labels_payload` and read back into
:class:`~snapaudit.tables.PairLabel` by :func:`labels_of_stage`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TypeVar

from snapaudit.hashing import sha256_json
from snapaudit.judge.base import Judge, judge_with_usage
from snapaudit.judge.split import Packet, split_packets
from snapaudit.run.execution.runner import CellResult
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.stages.base import Cell
from snapaudit.run.stages.batch_calls import BatchCalls
from snapaudit.run.stages.keys import AttributionJudgeKey, JudgeKey
from snapaudit.run.stages.payloads import decode_labels, labels_payload
from snapaudit.tables import AnswerRef, PairLabel

J = TypeVar("J", JudgeKey, AttributionJudgeKey)


def judge_stage_name(judge: str) -> str:
    return f"judge:{judge}"


def judge_cell(judge: Judge, key: J, packet: Packet, batch: BatchCalls | None = None
               ) -> Cell[J]:
    """The cell of one blind packet: the request is the key's fields, the judge's spec and
    the packet's hash; through a provider batch when ``batch`` can carry it."""
    blind, mapping = packet

    def payload_of(verdict: dict[tuple[str, str], bool]) -> dict[str, Any]:
        return labels_payload(key, verdict, mapping, judge.name)

    async def call(attempt: int, seed: int) -> CellResult:
        verdict, usage, meta = await judge_with_usage(judge, blind, seed)
        return CellResult(payload_of(verdict), usage, meta=meta)

    body = [blind.labels, blind.answers, blind.pairs] if key.split else [
        blind.labels, blind.answers]
    request = {**key.fields(), "judge": judge.spec(), "packet": sha256_json(body)}
    batched = batch.judge(judge, blind, payload_of) if batch is not None else None
    return Cell(key, request, call, batched)


def judge_cells(judge: Judge, qid: str, question: str, answers: Sequence[tuple[AnswerRef, str]],
                seed: int, max_packet_tokens: int | None = None,
                batch: BatchCalls | None = None) -> list[Cell[JudgeKey]]:
    """The cells of one question: one packet, or several when it exceeds the token budget."""
    packets = split_packets(qid, question, answers, seed, max_packet_tokens)
    return [judge_cell(judge, JudgeKey(qid, k, len(packets)), packet, batch)
            for k, packet in enumerate(packets, start=1)]


def labels_of_stage(ledger: Ledger, judge_name: str, stage: str | None = None
                    ) -> list[PairLabel]:
    """The pair labels accepted under ``stage`` (default ``judge:<judge_name>``)."""
    return [lab for cell in ledger.cells(stage or judge_stage_name(judge_name))
            for lab in decode_labels(cell.cell_key, cell.payload, judge_name)]
