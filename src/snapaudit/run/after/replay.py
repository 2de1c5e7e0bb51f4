"""A re-judged run's systems: the parent run's locked answers, replayed without any call.

``snapaudit rejudge`` writes a protocol whose ``[lineage]`` names the parent run and the hash
of its answer lock. :func:`replay_system` then answers every cell of a state from the parent's
accepted answer cells, after checking the parent's lock chain and that its answer lock is the
one the lineage names. Nothing reaches a network: the engine's answer stage accepts the same
payloads again, and the semantic stage, gold unlock and analysis run as in any run.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from snapaudit.errors import IntegrityError
from snapaudit.run.record.protocol import LineageConfig
from snapaudit.run.stages.keys import AnswerKey
from snapaudit.run.stages.payloads import doc_hashes_of, payload_steps, payload_turns
from snapaudit.systems.base import AnswerCall, AnswerOutcome


@lru_cache(maxsize=8)
def parent_answers(parent_run: str, answer_lock: str) -> dict[str, dict[str, Any]]:
    """The parent's accepted answer cells after verifying its chain and its answer lock."""
    from snapaudit.run.record.locks import content_now, verify_chain
    from snapaudit.run.record.rundir import RunDir

    rd = RunDir(Path(parent_run))
    if not rd.initialized():
        raise IntegrityError(f"parent run {parent_run} is not a run directory")
    with rd:
        protocol = rd.load_protocol()
        ledger = rd.ledger()
        verify_chain(ledger.locks(), content_now(ledger, protocol, rd.base_dir() or Path.cwd()))
        locks = {record["stage"]: digest for record, digest in ledger.locks()}
        if "answer" not in locks:
            raise IntegrityError(f"parent run {parent_run} has no answer lock: finish it first")
        if locks["answer"] != answer_lock:
            raise IntegrityError(f"parent run {parent_run}: its answer lock {locks['answer'][:16]}"
                                 f" is not the one the lineage names ({answer_lock[:16]})")
        return {c.cell_key: dict(c.payload) for c in ledger.cells("answer")}


class ReplaySystem:
    """One state of a re-judged run: the parent's locked answers, no calls."""

    def __init__(self, state: str, lineage: LineageConfig):
        self.state = state
        self.lineage = lineage
        self._cells = parent_answers(lineage.parent_run, lineage.parent_answer_lock_sha256)

    def spec(self) -> dict[str, Any]:
        return {"kind": "replay", "state": self.state,
                "parent_answer_lock_sha256": self.lineage.parent_answer_lock_sha256}

    async def answer(self, call: AnswerCall) -> AnswerOutcome:
        key = AnswerKey(call.question_id, call.state, call.repeat).encode()
        payload = self._cells.get(key)
        if payload is None:
            raise IntegrityError(f"cell {key} is not among the parent run's locked answers")
        ids = payload.get("doc_ids")
        return AnswerOutcome(answer=str(payload["answer"]),
                             doc_ids=tuple(ids) if ids is not None else None,
                             meta={"replayed_from": "parent answer lock"},
                             doc_hashes=doc_hashes_of(payload), steps=payload_steps(payload),
                             turn_answers=payload_turns(payload))

    async def aclose(self) -> None:
        return None
