"""Answer cells: one per (question, state, repeat), for the answer stage and replication.

The request is ``{"question_id", "state", "repeat"}``; an accepted payload is
``{"answer", "doc_ids"}`` (and ``steps``, an agent's trajectory, when the system reports one),
validated against ``[answers] max_bytes``
(:func:`snapaudit.run.answers.validate_answer`), metered with the tokens the system
reported, and decoded back into :class:`~snapaudit.tables.AnswerRow` by :func:`answer_rows`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from snapaudit.run.execution.batch_calls import BatchCalls
from snapaudit.run.execution.runner import CellResult
from snapaudit.run.execution.schedule import answer_schedule
from snapaudit.run.record import cohort
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.locks import answer_publisher
from snapaudit.run.stages.base import Cell, Stage, run_stage
from snapaudit.run.stages.keys import AnswerKey
from snapaudit.run.stages.payloads import answer_result, payload_steps
from snapaudit.systems.base import AnswerCall, Evidence, System
from snapaudit.tables import AnswerRow

if TYPE_CHECKING:
    from snapaudit.run.context import RunContext

STAGE = "answer"


def answer_cell(system: System, key: AnswerKey, question: str, evidence: Evidence | None,
                max_bytes: int, batch: BatchCalls | None = None) -> Cell[AnswerKey]:
    """One answer cell; through a provider batch when ``batch`` can carry it."""
    qid, state, repeat = key.question_id, key.state, key.repeat

    async def call(attempt: int, seed: int) -> CellResult:
        out = await system.answer(AnswerCall(qid, question, state, repeat, attempt, seed,
                                             evidence))
        return answer_result(out, max_bytes)

    batched = batch.answer(system, qid, question, state, repeat, evidence, max_bytes) \
        if batch is not None else None
    return Cell(key, {"question_id": qid, "state": state, "repeat": repeat}, call, batched)


async def answer_stage(run: RunContext, evidence: Mapping[tuple[str, str], Evidence | None],
                       max_bytes: int) -> None:
    """Every scheduled answer cell, then the answer lock."""
    text = {q.question_id: q.question for q in run.questions}
    batch = BatchCalls(run.protocol)  # run.mode = "batch": provider batch APIs
    cells = [answer_cell(run.systems[sc.state], AnswerKey(sc.question_id, sc.state, sc.repeat),
                         text[sc.question_id], evidence.get((sc.question_id, sc.state)),
                         max_bytes, batch)
             for sc in answer_schedule(list(text), run.protocol.states.order,
                                       run.protocol.design.repeats)]
    per_endpoint = run.protocol.system.kind == "http"
    await run_stage(run.ledger, Stage(STAGE, cells), run.policy(not per_endpoint),
                    run.progress, run.protocol.run)
    run.lock("answer", run.ledger.content_hashes(STAGE, answer_publisher(run.protocol)))


def answer_rows(ledger: Ledger, questions: Sequence[cohort.Question] | Mapping[str, str],
                stage: str = STAGE) -> list[AnswerRow]:
    """The accepted answers of ``stage`` as interchange rows. With the cohort's questions:
    with their clusters, in cohort order, then state key, then repeat; with a mapping of
    question texts: in ledger order."""
    if isinstance(questions, Mapping):
        text, cluster, order = dict(questions), {}, None
    else:
        text = {q.question_id: q.question for q in questions}
        cluster = {q.question_id: q.cluster for q in questions}
        order = {q.question_id: i for i, q in enumerate(questions)}
    rows = []
    for cell in ledger.cells(stage):
        key = AnswerKey.decode(cell.cell_key)
        ids = cell.payload.get("doc_ids")
        rows.append(AnswerRow(key.question_id, key.state, key.repeat, cell.payload["answer"],
                              tuple(ids) if ids is not None else None,
                              text.get(key.question_id), cluster.get(key.question_id),
                              payload_steps(cell.payload)))
    if order is None:
        return rows
    return sorted(rows, key=lambda r: (order.get(r.question_id, -1), r.state, r.repeat))
