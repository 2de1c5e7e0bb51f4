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

from snapaudit.errors import ConfigError, LockError
from snapaudit.judge.registry import judge_kind
from snapaudit.progress import Progress
from snapaudit.results import read_results, write_results
from snapaudit.run.after.attribution_cost import attribution_stages
from snapaudit.run.after.attribution_systems import (
    NEEDS_DOCUMENTS,
    check_opt_in,
    read_documents,
    record_plan,
)
from snapaudit.run.after.attribution_table import (
    Selection,
    evidence_lists,
    flagged_questions,
    section,
)
from snapaudit.run.after.dryrun import StagePlan
from snapaudit.run.answers import max_answer_bytes
from snapaudit.run.execution.interrupt import interruptible
from snapaudit.run.execution.runner import RetryPolicy
from snapaudit.run.record import cohort
from snapaudit.run.record.ledger import Ledger
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
from snapaudit.run.stages.base import Stage, retry_policy, run_stage
from snapaudit.run.stages.batch_calls import billed_model
from snapaudit.run.stages.judge import labels_of_stage
from snapaudit.run.stages.keys import AttributionJudgeKey, AttributionKey
from snapaudit.run.stages.retrieval import locked_evidence
from snapaudit.stats.attribution import AttributionSection, default_call_budget, entering
from snapaudit.systems.resources import RunResources
from snapaudit.tables import AnswerRef, AnswerRow, PairLabel

MAX_CALLS_CAP = 2000


@dataclass(frozen=True, slots=True)
class AttributionOutcome:
    planned_calls: int  # cells of the plan (answers, then one judge packet per variant)
    pending_calls: int  # of those not yet accepted when the command began
    table: AttributionSection | None  # None on a dry run
    results_path: Path | None
    budget: int = 0  # --max-calls, or its default for this selection
    stages: tuple[StagePlan, ...] = ()  # a dry run's pending calls, tokens and cost


def attribute_run(run_dir: Path, progress: Progress, *, max_questions: int = 50,
                  max_calls: int | None = None, dry_run: bool = False,
                  documents: Path | None = None) -> AttributionOutcome:
    """``documents``: the JSONL documents file a Python or HTTP system's counterfactual
    evidence is read from (:mod:`snapaudit.run.after.attribution_systems`)."""
    with interruptible() as run, RunDir(run_dir) as rd:
        outcome: AttributionOutcome = run(_attribute(rd, progress, max_questions, max_calls,
                                                     dry_run, documents))
        return outcome


async def _attribute(rd: RunDir, progress: Progress, max_questions: int,
                     max_calls: int | None, dry_run: bool,
                     documents: Path | None) -> AttributionOutcome:
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
    if not rd.results_path.exists():
        raise LockError(f"{rd.results_path} not found: the run's analysis did not finish; "
                        "run `snapaudit run` again to write it")
    talk = cohort.conversations(cohort.read_manifest(rd.cohort_path))
    if talk:  # a counterfactual answer is of one question and one set of documents
        raise ConfigError(f"attribution answers single questions; {len(talk)} cohort "
                          f"question(s) are conversations (e.g. {next(iter(talk))})")
    kind = protocol.system.kind
    check_opt_in(protocol, protocol.states.new, base)
    if kind != "testbed" and documents is None:
        raise ConfigError(NEEDS_DOCUMENTS.format(kind=kind))
    manifest = cohort.read_manifest(rd.cohort_path)
    questions = {q.question_id: q.question for q in manifest}
    answers = answer_rows(ledger, manifest)
    labels = pair_labels_of(rd, protocol)
    old, new = protocol.states.old, protocol.states.new
    judges = judge_kind(protocol.judge.kind)
    judged = judges.packets
    judge_name = protocol.judge.name if judged else None
    sel = Selection(old, new, protocol.judge.name if judges.labels else None,
                    judged, protocol.gold.benchmark, max_questions)
    chosen, flips = flagged_questions(answers, labels, sel)
    plans = (_testbed_plans(ledger, chosen, flips, questions, old, new) if kind == "testbed"
             else _record_plans(answers, chosen, flips, questions, old, new, documents))
    repeats = protocol.design.repeats
    by_endpoint = stage.endpoint_answers(answers, old, new)
    answer_keys = {AttributionKey(p.question_id, v, r).encode()
                   for p in plans for v in p.variants for r in range(1, repeats + 1)}
    judge_keys = {AttributionJudgeKey(p.question_id, v).encode()
                  for p in plans for v in p.variants} if judged else set()
    planned = len(answer_keys) + len(judge_keys)
    done_judge = ledger.accepted_keys(stage.judge_stage(judge_name)) if judge_name else set()
    todo_answers = answer_keys - ledger.accepted_keys(stage.STAGE)
    todo_judge = judge_keys - done_judge
    pending = len(todo_answers) + len(todo_judge)
    locked = any(r.stage == "attribution" for r in chain)
    if locked and pending:
        raise ConfigError(f"attribution is locked for another selection of questions "
                          f"({pending} cell(s) of this one are missing); locked cells cannot "
                          "change: rerun with the --max-questions it was locked with")
    budget = max_calls if max_calls is not None else default_call_budget(
        [len(entering(p.old, p.new)) for p in plans], repeats, judged, MAX_CALLS_CAP)
    if dry_run:
        stages = attribution_stages(protocol, plans, repeats, todo_answers, todo_judge,
                                    by_endpoint)
        return AttributionOutcome(planned, pending, None, None, budget, tuple(stages))
    if pending > budget:
        raise ConfigError(f"attribution needs {pending} more call(s), over the budget of "
                          f"{budget} (--max-calls)")
    if not locked:
        resources = run_resources(protocol)
        system = build_system(protocol, new, rd.path, base, resources)
        policy = retry_policy(protocol.run, protocol.design.seed, secrets=resources.secrets)
        try:
            seeds = stage.state_seeds(ledger, protocol.design.seed, (old, new))
            cells = stage.answer_cells(system, (old, new), plans, repeats,
                                       max_answer_bytes(protocol), seeds, protocol.design.seed)
            await run_stage(ledger, Stage(stage.STAGE, cells, batchable=False,
                                          model=billed_model([system])), policy, progress)
            if judge_name is not None:
                await _judge(rd, protocol, plans, by_endpoint, policy, progress, resources)
        finally:
            await system.aclose()
            await resources.aclose()
        content = attribution_content(ledger, protocol)
        record, digest = make_lock("attribution", dict(chain[-1].depends), content, chain)
        ledger.add_lock(record.seq, "attribution", record.model_dump(mode="json"), digest)
        progress.info(f"locked attribution ({digest[:12]})")
    table = section(answers, labels, sel, {p.question_id: (p.old, p.new) for p in plans},
                    stage.ledger_cells(ledger, stage.STAGE),
                    stage.ledger_cells(ledger, stage.judge_stage(judge_name))
                    if judge_name is not None else [])
    results = read_results(rd.results_path).with_sections(attribution=table)
    return AttributionOutcome(planned, pending, table, write_results(rd.results_path, results),
                              budget)


def _testbed_plans(ledger: Ledger, chosen: Sequence[str], flips: set[str],
                   questions: Mapping[str, str], old: str, new: str
                   ) -> list[stage.QuestionPlan]:
    evidence = locked_evidence(ledger)
    plans = []
    for qid in chosen:
        ev_old, ev_new = evidence.get((qid, old)), evidence.get((qid, new))
        if ev_old is None or ev_new is None:
            raise ConfigError(f"question {qid}: attribution needs locked evidence in both "
                              f"states ({old} and {new}); a state without retrieval has none")
        plans.append(stage.plan_question(qid, questions[qid], qid in flips, ev_old, ev_new))
    return plans


def _record_plans(answers: Sequence[AnswerRow], chosen: Sequence[str], flips: set[str],
                  questions: Mapping[str, str], old: str, new: str, documents: Path | None
                  ) -> list[stage.QuestionPlan]:
    assert documents is not None
    records = read_documents(documents)
    lists = evidence_lists(answers, old, new)
    missing = [q for q in chosen if q not in lists or not all(lists[q])]
    if missing:
        raise ConfigError(f"attribution needs the doc_ids the system's answers report; "
                          f"question {missing[0]} has none in {old} or {new}")
    return [record_plan(q, questions[q], q in flips, *lists[q], records) for q in chosen]


def pair_labels_of(rd: RunDir, protocol: Protocol) -> list[PairLabel]:
    """The accepted pair labels of the run's primary judge."""
    if not judge_kind(protocol.judge.kind).labels:
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
        cf = stage.counterfactual_answers(stage.ledger_cells(ledger, stage.STAGE))
        cells = stage.judge_cells(judge, plans, by_endpoint, cf, protocol.design.seed)
        await run_stage(ledger, Stage(stage.judge_stage(judge.name), cells, batchable=False,
                                      model=judge.model), policy, progress)
    finally:
        await judge.aclose()
