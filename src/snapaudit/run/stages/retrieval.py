"""Retrieval cells (``RetrievingSystem`` states only): each question retrieved twice per
state (passes 1 and 2, which must agree), then the retrieval lock. The payload is
``{"evidence": {"doc_ids", "rendered"} | None}``; :func:`locked_evidence` decodes pass 1
back into :class:`~snapaudit.systems.base.Evidence` for the answer cells."""

from __future__ import annotations

from typing import TYPE_CHECKING

from snapaudit.errors import IntegrityError
from snapaudit.run.execution.runner import CellResult
from snapaudit.run.record import cohort
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.stages.base import Cell, Stage, run_stage
from snapaudit.run.stages.keys import RetrievalKey
from snapaudit.systems.base import Evidence, RetrievingSystem

if TYPE_CHECKING:
    from snapaudit.run.context import RunContext

STAGE = "retrieval"


def retrieval_cell(system: RetrievingSystem, q: cohort.Question, state: str,
                   pass_no: int) -> Cell[RetrievalKey]:
    async def call(attempt: int, seed: int) -> CellResult:
        # called on the event loop thread: retrievers need not be thread-safe
        ev = await system.retrieve(q.question_id, q.question, pass_no)
        if ev is None:
            return CellResult({"evidence": None})
        return CellResult({"evidence": {"doc_ids": list(ev.doc_ids), "rendered": ev.rendered}})

    key = RetrievalKey(q.question_id, state, pass_no)
    return Cell(key, key.fields(), call, endpoint=state)  # each state's own retriever


async def retrieval_stage(run: RunContext) -> None:
    """Both passes of every question and retrieving state, checked equal, then locked."""
    cells = [retrieval_cell(system, q, state, pass_no)
             for q in run.questions for state, system in run.systems.items()
             if isinstance(system, RetrievingSystem) for pass_no in (1, 2)]
    await run_stage(run.ledger, Stage(STAGE, cells, batchable=False), run.policy(False),
                    run.progress)
    cells_now = {RetrievalKey.decode(c.cell_key): c.payload for c in run.ledger.cells(STAGE)}
    bad = sorted(k.pair() for k, p1 in cells_now.items()
                 if k.pass_no == 1 and cells_now.get(RetrievalKey(k.question_id, k.state, 2))
                 != p1)
    if bad:
        raise IntegrityError("retrieval is not reproducible (pass 1 != pass 2) for "
                             f"{len(bad)} cell(s): " + ", ".join(bad))
    run.lock("retrieval", run.ledger.content_hashes(STAGE))


def locked_evidence(ledger: Ledger) -> dict[tuple[str, str], Evidence | None]:
    """(question, state) -> the accepted evidence of pass 1."""
    out: dict[tuple[str, str], Evidence | None] = {}
    for cell in ledger.cells(STAGE):
        key = RetrievalKey.decode(cell.cell_key)
        if key.pass_no == 1:
            ev = cell.payload["evidence"]
            out[(key.question_id, key.state)] = None if ev is None else Evidence(
                tuple(ev["doc_ids"]), ev["rendered"])
    return out
