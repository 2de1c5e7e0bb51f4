"""Answer cells: one per (question, state, repeat), for the answer stage and replication.

The request is ``{"question_id", "state", "repeat"}``; an accepted payload is
``{"answer", "doc_ids"}`` (and ``steps``, an agent's trajectory, when the system reports one),
validated against ``[answers] max_bytes``
(:func:`snapaudit.run.answers.validate_answer`), metered with the tokens the system
reported, and decoded back into :class:`~snapaudit.tables.AnswerRow` by :func:`answer_rows`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any, TypeVar

from snapaudit.run.execution.runner import CellResult
from snapaudit.run.execution.schedule import answer_schedule
from snapaudit.run.record import cohort
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.locks import answer_publisher
from snapaudit.run.stages.base import Cell, Stage, run_stage
from snapaudit.run.stages.batch_calls import BatchCalls, billed_model
from snapaudit.run.stages.keys import AnswerKey, AttributionKey
from snapaudit.run.stages.payloads import (
    answer_result,
    doc_hashes_of,
    payload_steps,
    payload_turns,
)
from snapaudit.systems.base import AnswerCall, Evidence, System
from snapaudit.tables import AnswerRow

if TYPE_CHECKING:
    from snapaudit.run.context import RunContext

STAGE = "answer"
A = TypeVar("A", AnswerKey, AttributionKey)
SeedHook = Callable[[int], int]  # the runner's seed of an attempt -> the seed drawn with


def ask(key: AnswerKey, question: str, evidence: Evidence | None,
        turns: tuple[str, ...] | None = None) -> AnswerCall:
    """What an answer cell of ``key`` asks its state's system (attempt and seed: per attempt;
    ``turns``: a conversation's)."""
    return AnswerCall(key.question_id, question, key.state, key.repeat, 0, 0, evidence, turns)


def answer_cell(system: System, key: A, asked: AnswerCall, max_bytes: int, *,
                extra: Mapping[str, Any] | None = None, seed_of: SeedHook | None = None,
                batch: BatchCalls | None = None, endpoint: str | None = None,
                steps: bool = True) -> Cell[A]:
    """One answer cell: ``system`` answers ``asked`` with each attempt's number and seed.

    The request is the key's fields and ``extra``; ``seed_of`` maps the seed the runner
    derived for an attempt to the one the system draws with (the attribution's hook: the
    edited state's seed); the cell goes through a provider batch when ``batch`` can carry it.
    ``steps=False`` keeps no trajectory (a counterfactual answer is attributed alone).
    """
    def attempt_of(attempt: int, seed: int) -> AnswerCall:
        return replace(asked, attempt=attempt, seed=seed if seed_of is None else seed_of(seed))

    async def call(attempt: int, seed: int) -> CellResult:
        return answer_result(await system.answer(attempt_of(attempt, seed)), max_bytes,
                             steps=steps)

    batched = batch.answer(system, attempt_of, max_bytes) if batch is not None else None
    return Cell(key, {**key.fields(), **(extra or {})}, call, batched, endpoint)


def answer_cells(systems: Mapping[str, System], questions: Mapping[str, str],
                 states: Sequence[str], repeats: int,
                 evidence: Mapping[tuple[str, str], Evidence | None], max_bytes: int,
                 batch: BatchCalls | None = None,
                 turns: Mapping[str, tuple[str, ...]] | None = None) -> list[Cell[AnswerKey]]:
    """Every answer cell of the schedule (``questions``: id -> text, in cohort order;
    ``turns``: the conversations' user turns); each names its state as its endpoint (each
    state's own system)."""
    turns = turns or {}
    keys = [AnswerKey(sc.question_id, sc.state, sc.repeat)
            for sc in answer_schedule(list(questions), states, repeats)]
    return [answer_cell(systems[k.state], k,
                        ask(k, questions[k.question_id], evidence.get((k.question_id, k.state)),
                            turns.get(k.question_id)),
                        max_bytes, batch=batch, endpoint=k.state) for k in keys]


async def answer_stage(run: RunContext, evidence: Mapping[tuple[str, str], Evidence | None],
                       max_bytes: int) -> None:
    """Every scheduled answer cell, then the answer lock."""
    text = {q.question_id: q.question for q in run.questions}
    batch = BatchCalls(run.protocol)  # run.mode = "batch": provider batch APIs
    cells = answer_cells(run.systems, text, run.protocol.states.order,
                         run.protocol.design.repeats, evidence, max_bytes, batch,
                         cohort.conversations(run.questions))
    per_endpoint = run.protocol.system.kind == "http"
    await run_stage(run.ledger, Stage(STAGE, cells, model=billed_model(run.systems.values())),
                    run.policy(not per_endpoint), run.progress, run.protocol.run)
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
                              doc_hashes_of(cell.payload), payload_steps(cell.payload),
                              payload_turns(cell.payload)))
    if order is None:
        return rows
    return sorted(rows, key=lambda r: (order.get(r.question_id, -1), r.state, r.repeat))
