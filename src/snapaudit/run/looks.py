"""The sequential design of a run (``[design] looks = K``): blocks of questions, a look after
each, a stop when the look decides.

Block k is the first n_k = floor(k N / K) questions of the cohort (N: the cohort's size).
Its retrieval, answer and judge cells run as every stage's do (missing and transport-failed
cells only), without locking; then the look reads the block's answers and primary-judge
labels (never gold: it sees only what the gate sees), takes the look with the analysis's
own code (:func:`snapaudit.stats.sequential.take_looks`) and records it as a ``look`` lock
(:func:`snapaudit.stats.looks.look_record`). The run stops at the first look that
establishes INCOMPATIBLE or COMPATIBLE; then, or after the last look, the stage locks close
every question used, and the gold and analysis follow as in the fixed design.

A rerun of a stopped run makes no call: its look locks say where it stopped. A run killed
between looks resumes at the next block, with the same answers as an uninterrupted run (a
cell's seed depends on its key, never on when it runs). At every resume each look lock is
recomputed from the ledger (:func:`look_contents`), so a look cannot be edited afterwards.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import replace

from snapaudit.errors import IntegrityError
from snapaudit.judge.registry import judge_kind
from snapaudit.run.analysis.results import analysis_config
from snapaudit.run.context import RunContext
from snapaudit.run.record import cohort
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.locks import LockRecord
from snapaudit.run.record.protocol import Protocol
from snapaudit.run.stages.answer import answer_rows
from snapaudit.run.stages.judge import labels_of_stage
from snapaudit.stats.looks import look_data, look_record
from snapaudit.stats.sequential import STOPS, Look, block_sizes, check_design, take_looks
from snapaudit.tables import PairLabel

Collect = Callable[[RunContext], Awaitable[None]]


def look_locks(chain: Sequence[LockRecord]) -> list[LockRecord]:
    return [r for r in chain if r.stage == "look"]


def used_questions(run: RunContext) -> list[cohort.Question]:
    """The questions a sequential run used: up to its last look when that look stopped it,
    else the whole cohort."""
    locks = look_locks(run.chain)
    if locks and locks[-1].content.get("decision") in STOPS:
        return run.questions[:int(locks[-1].content["questions"])]
    return run.questions


async def take_run_looks(run: RunContext, collect: Collect) -> list[cohort.Question]:
    """Run the blocks not yet looked at, a look after each; return the questions used."""
    planned, looks = len(run.questions), run.protocol.design.looks
    check_design(planned, looks)
    done = look_locks(run.chain)
    for k, n in enumerate(block_sizes(planned, looks), start=1):
        if k <= len(done):
            if done[k - 1].content.get("decision") in STOPS:
                return run.questions[:n]
            continue
        block = replace(run, questions=run.questions[:n], locking=False)
        await collect(block)
        look, content = _look(run.ledger, run.protocol, run.questions, n)
        if look.look != k:
            raise IntegrityError(f"look {k} of the run computed as look {look.look}")
        run.lock("look", content)
        run.progress.info(_line(look, looks, planned))
        if look.decision in STOPS:
            return run.questions[:n]
    return run.questions


def _line(look: Look, looks: int, planned: int) -> str:
    return (f"look {look.look} of {looks}: {look.questions} of {planned} questions: "
            f"{look.decision}")


def _look(ledger: Ledger, protocol: Protocol, questions: Sequence[cohort.Question], n: int
          ) -> tuple[Look, dict[str, str]]:
    """The last look the first ``n`` questions reach, and its lock content."""
    prefix = questions[:n]
    keep = {q.question_id for q in prefix}
    rows = [r for r in answer_rows(ledger, prefix) if r.question_id in keep]
    labels = _labels(ledger, protocol, keep)
    config = analysis_config(protocol, planned=len(questions))
    data, calls = look_data(rows, labels, config)
    seq = take_looks(data, config.gate, config.looks, len(questions), calls)
    look = seq.looks[-1]
    return look, look_record(look, rows, labels)


def _labels(ledger: Ledger, protocol: Protocol, keep: set[str]) -> list[PairLabel]:
    if not judge_kind(protocol.judge.kind).labels:
        return []
    return [lab for lab in labels_of_stage(ledger, protocol.judge.name)
            if lab.question_id in keep]


def look_contents(ledger: Ledger, protocol: Protocol, questions: Sequence[cohort.Question],
                  chain: Sequence[Mapping[str, object]]) -> dict[str, dict[str, str]]:
    """Each look lock's content recomputed from the ledger (``look:K`` keys)."""
    out: dict[str, dict[str, str]] = {}
    for record in chain:
        if record.get("stage") != "look":
            continue
        content = record.get("content")
        if not isinstance(content, Mapping):
            continue
        n = int(str(content.get("questions", 0)))
        if 0 < n <= len(questions):  # keyed by the record's own number: a change is named
            out[f"look:{content.get('look', '?')}"] = _look(ledger, protocol, questions, n)[1]
    return out
