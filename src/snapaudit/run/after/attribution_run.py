"""``snapaudit attribute DIR``: counterfactual evidence attribution of a finished run.

Needs the gold lock. Flags the strict flips between ``old`` and ``new`` (the semantic
kernel when the run has a judge, else exact) and then the questions with the largest
D_i > 0, up to ``max_questions``; answers every counterfactual list of
:mod:`snapaudit.run.stages.attribution` with the new state's testbed system, judges them
with the run's judge, locks ``attribution`` after ``gold`` and adds the ``attribution``
section to ``results.json``. Every cell is an attempt recorded before its call; a rerun
resumes (an accepted cell is never called again).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snapaudit.errors import ConfigError, LockError
from snapaudit.progress import Progress
from snapaudit.run.answers import max_answer_bytes
from snapaudit.run.execution.interrupt import interruptible
from snapaudit.run.execution.runner import RetryPolicy, run_cells
from snapaudit.run.record import cohort
from snapaudit.run.record.locks import (
    attribution_content,
    content_now,
    make_lock,
    verify_chain,
    verify_run_files,
)
from snapaudit.run.record.protocol import Protocol
from snapaudit.run.record.rundir import RunDir
from snapaudit.run.stages import attribution as stage
from snapaudit.run.stages.answer import answer_rows
from snapaudit.run.stages.base import retry_policy
from snapaudit.run.stages.judge import labels_of_stage
from snapaudit.run.stages.retrieval import locked_evidence
from snapaudit.stats.attribution import attribute_question, attribution_table, entering
from snapaudit.stats.churn import per_question
from snapaudit.stats.flips import flip_ids
from snapaudit.stats.kernels import AnswerGrid, ExactKernel, Kernel, SemanticKernel
from snapaudit.stats.normalize import normalizer
from snapaudit.systems.resources import RunResources
from snapaudit.tables import AnswerRef, AnswerRow, PairLabel

NEEDS_TESTBED = ("attribution needs the built-in testbed (or a python target that accepts "
                 "an `evidence` keyword)")
MAX_CALLS_CAP = 2000


@dataclass(frozen=True, slots=True)
class AttributionOutcome:
    planned_calls: int  # cells of the plan (answers, then one judge packet per variant)
    pending_calls: int  # of those not yet accepted when the command began
    table: dict[str, Any] | None  # None on a dry run
    results_path: Path | None


def flagged_questions(answers: Sequence[AnswerRow], protocol: Protocol, labels: Sequence[PairLabel],
                      max_questions: int) -> tuple[list[str], set[str]]:
    """Strict flips first, then the largest D_i > 0 (ties by question id); and the flips."""
    grid = AnswerGrid.from_rows(answers)
    old, new = protocol.states.old, protocol.states.new
    kernel: Kernel = (SemanticKernel(labels, protocol.judge.name) if labels
                      else ExactKernel(grid, normalizer(protocol.gold.benchmark)))
    flips = flip_ids(kernel, grid, old, new)
    pq = per_question(grid, kernel, old, new)
    d = dict(zip(pq.question_ids, pq.d.tolist(), strict=True))
    rest = sorted((q for q in d if d[q] > 0 and q not in flips), key=lambda q: (-d[q], q))
    return [*flips, *rest][:max_questions], set(flips)


def attribute_run(run_dir: Path, progress: Progress, *, max_questions: int = 50,
                  max_calls: int | None = None, dry_run: bool = False) -> AttributionOutcome:
    with interruptible() as run, RunDir(run_dir) as rd:
        outcome: AttributionOutcome = run(_attribute(rd, progress, max_questions, max_calls,
                                                     dry_run))
        return outcome


async def _attribute(rd: RunDir, progress: Progress, max_questions: int,
                     max_calls: int | None, dry_run: bool) -> AttributionOutcome:
    from snapaudit.run.systems import build_system, run_resources

    if not rd.initialized():
        raise LockError(f"{rd.path} is not a run directory: run the audit first")
    protocol = rd.load_protocol()
    base = rd.base_dir() or Path.cwd()
    verify_run_files(rd)
    ledger = rd.ledger()
    chain = verify_chain(ledger.locks(), content_now(ledger, protocol, base))
    if not any(r.stage == "gold" for r in chain):
        raise LockError("attribution needs a finished run (the gold lock): run it first")
    if protocol.system.kind != "testbed":
        raise ConfigError(NEEDS_TESTBED)
    manifest = cohort.read_manifest(rd.cohort_path)
    questions = {q.question_id: q.question for q in manifest}
    answers = answer_rows(ledger, manifest)
    labels = pair_labels_of(rd, protocol)
    old, new = protocol.states.old, protocol.states.new
    chosen, flips = flagged_questions(answers, protocol, labels, max_questions)
    evidence = locked_evidence(ledger)
    plans = []
    for qid in chosen:
        ev_old, ev_new = evidence.get((qid, old)), evidence.get((qid, new))
        if ev_old is None or ev_new is None:
            raise ConfigError(NEEDS_TESTBED)
        plans.append(stage.plan_question(qid, questions[qid], qid in flips, ev_old, ev_new))
    repeats = protocol.design.repeats
    by_endpoint: dict[tuple[str, str], list[tuple[AnswerRef, str]]] = {
        (r.question_id, side): [] for r in answers for side in ("old", "new")}
    for r in answers:
        if r.state in (old, new):
            by_endpoint[(r.question_id, "old" if r.state == old else "new")].append(
                (AnswerRef(r.state, r.repeat), r.answer))
    judged = protocol.judge.kind in ("llm", "rule")
    judge_name = protocol.judge.name if judged else None
    answer_keys = {stage.AttributionKey(p.question_id, v, r).encode()
                   for p in plans for v in p.variants for r in range(1, repeats + 1)}
    judge_keys = {stage.AttributionJudgeKey(p.question_id, v).encode()
                  for p in plans for v in p.variants} if judged else set()
    planned = len(answer_keys) + len(judge_keys)
    done_judge = ledger.accepted_keys(stage.judge_stage(judge_name)) if judge_name else set()
    pending = len(answer_keys - ledger.accepted_keys(stage.STAGE)) + len(judge_keys - done_judge)
    locked = any(r.stage == "attribution" for r in chain)
    if locked and pending:
        raise ConfigError(f"attribution is locked for another selection of questions "
                          f"({pending} cell(s) of this one are missing); locked cells cannot "
                          "change: rerun with the --max-questions it was locked with")
    budget = max_calls if max_calls is not None else min(MAX_CALLS_CAP, sum(
        4 * repeats * len(entering(p.old, p.new)) for p in plans))
    if dry_run:
        return AttributionOutcome(planned, pending, None, None)
    if pending > budget:
        raise ConfigError(f"attribution needs {pending} more call(s), over the budget of "
                          f"{budget} (--max-calls)")
    if not locked:
        resources = run_resources(protocol)
        system = build_system(protocol, new, rd.path, base, resources)
        from snapaudit.testbed.system import TestbedSystem

        if not isinstance(system, TestbedSystem):
            raise ConfigError(NEEDS_TESTBED)
        policy = retry_policy(protocol.run, protocol.design.seed)
        try:
            await run_cells(ledger, stage.STAGE,
                            stage.answer_cells(system, new, plans, repeats,
                                               max_answer_bytes(protocol)), policy, progress)
            if judge_name is not None:
                await _judge(rd, protocol, plans, by_endpoint, policy, progress, resources)
        finally:
            await system.aclose()
            await resources.aclose()
        content = attribution_content(ledger, protocol)
        record, digest = make_lock("attribution", dict(chain[-1].depends), content, chain)
        ledger.add_lock(record.seq, "attribution", record.model_dump(mode="json"), digest)
        progress.info(f"locked attribution ({digest[:12]})")
    norm = normalizer(protocol.gold.benchmark)
    agree = stage.agreements(ledger, judge_name, old, new, lambda a, b: norm(a) == norm(b),
                             plans, by_endpoint)
    table = attribution_table([
        attribute_question(p.question_id, p.flip, p.old, p.new, agree.get(p.question_id, {}))
        for p in plans])
    results: dict[str, Any] = {}
    if rd.results_path.exists():
        import json

        results = json.loads(rd.results_path.read_text(encoding="utf-8"))
    results["attribution"] = table
    return AttributionOutcome(planned, pending, table, rd.write_results(results))


def pair_labels_of(rd: RunDir, protocol: Protocol) -> list[PairLabel]:
    """The accepted pair labels of the run's primary judge."""
    if protocol.judge.kind == "none":
        return []
    return labels_of_stage(rd.ledger(), protocol.judge.name)


async def _judge(rd: RunDir, protocol: Protocol, plans: Sequence[stage.QuestionPlan],
                 by_endpoint: Mapping[tuple[str, str], Sequence[tuple[AnswerRef, str]]],
                 policy: RetryPolicy, progress: Progress, resources: RunResources) -> None:
    from snapaudit.judge.registry import build_judge

    cfg = protocol.judge
    if cfg.prompt == "auto":
        cfg = cfg.model_copy(update={"prompt": protocol.answers.kind})
    judge = build_judge(cfg, resources)
    ledger = rd.ledger()
    try:
        cells = stage.judge_cells(judge, plans, by_endpoint,
                                  stage.counterfactual_answers(ledger), protocol.design.seed)
        await run_cells(ledger, stage.judge_stage(judge.name), cells, policy, progress)
    finally:
        await judge.aclose()
