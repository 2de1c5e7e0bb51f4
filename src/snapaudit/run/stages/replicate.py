"""Second-generator replication: rerun two locked states with another generator.

For an outcome-blind hash sample of questions (ids ordered by
``SHA-256("snapaudit/replicate/v1" NUL str(seed) NUL question_id)``, the first ``n``),
the locked prompt surface (:mod:`snapaudit.testbed.prompt`, via the testbed system) and the
locked evidence of the old and new states are sent to another generator, ``repeats``
times each (stage ``replicate:<name>:answer``). The answers are judged blind, one
packet per question with the four answers (stage ``replicate:<name>:judge:<judge>``),
and analyzed like the original on the same questions. The paired difference
(replication minus original, per question, whole-question bootstrap) is reported per
kernel. When the original judge saw a larger packet (scope ``all``) the comparison of
semantic D is descriptive, and the result says so.

Both stages are cells of the run's own kinds (:mod:`snapaudit.run.stages.answer`,
:mod:`snapaudit.run.stages.judge`): answers are held to the run's ``[answers] max_bytes``
and every call is metered, so the replication's tokens appear in ``usage`` when the run's
results are written again. They are written into the run's ledger, hence a run stage.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from snapaudit import atomic
from snapaudit.errors import ConfigError, LockError
from snapaudit.judge.base import Judge
from snapaudit.judge.config import JudgeConfig
from snapaudit.judge.registry import judge_kind
from snapaudit.progress import Progress
from snapaudit.run.answers import TESTBED_MAX_BYTES, max_answer_bytes
from snapaudit.run.execution.runner import RetryPolicy
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.stages.answer import answer_cell, answer_rows, ask
from snapaudit.run.stages.base import Stage, retry_policy, run_stage
from snapaudit.run.stages.batch_calls import billed_model
from snapaudit.run.stages.judge import judge_cells, labels_of_stage
from snapaudit.run.stages.keys import AnswerKey
from snapaudit.run.stages.retrieval import locked_evidence
from snapaudit.run.stages.sample import hash_sample
from snapaudit.stats.analysis import AnalysisConfig, AnalysisResult, analyze
from snapaudit.stats.bootstrap import Interval, whole_question_bootstrap
from snapaudit.systems.base import Evidence, System
from snapaudit.systems.resources import RunResources
from snapaudit.tables import AnswerRef, AnswerRow, PairLabel
from snapaudit.testbed.generate.config import GeneratorConfig

SAMPLE_VERSION = "snapaudit/replicate/v1"


@dataclass(frozen=True, slots=True)
class ReplicationPlan:
    name: str
    old: str
    new: str
    sample: int
    seed: int
    repeats: int = 2
    draws: int = 10_000
    benchmark: str = "nq"
    original_judge: str = "judge"
    original_scope: str = "all"
    max_bytes: int = TESTBED_MAX_BYTES  # the run's [answers] max_bytes


@dataclass(frozen=True)
class Replication:
    question_ids: tuple[str, ...]
    original: AnalysisResult
    replicated: AnalysisResult
    paired: Mapping[str, Interval]
    scope_note: str | None

    def to_json(self) -> dict[str, Any]:
        def brief(r: AnalysisResult) -> dict[str, Any]:
            util = r.utility.to_json() if r.utility else None
            return {"kernels": {k: v.to_json() for k, v in r.kernels.items()},
                    "flips": r.flips.to_json(), "utility": util}

        return {"schema": SAMPLE_VERSION, "questions": list(self.question_ids),
                "original": brief(self.original), "replicated": brief(self.replicated),
                "paired_difference_pp": {k: v.to_json() for k, v in self.paired.items()},
                "scope_note": self.scope_note}


def replication_sample(question_ids: Sequence[str], n: int, seed: int) -> list[str]:
    """The outcome-blind hash sample of :mod:`snapaudit.run.stages.sample`."""
    return hash_sample(question_ids, n, seed, SAMPLE_VERSION)


def _scope_note(plan: ReplicationPlan) -> str | None:
    if plan.original_scope == "endpoints":
        return None
    return ("packet scopes differ: the original judge saw every state's answers per question, "
            "the replication only the old and new state's; the paired difference of semantic "
            "D is descriptive")


async def run_replication(
    ledger: Ledger,
    answers: Sequence[AnswerRow],
    labels: Sequence[PairLabel],
    questions: Mapping[str, str],
    evidence: Mapping[tuple[str, str], Evidence | None],
    system_of: Callable[[str], System],
    judge: Judge,
    plan: ReplicationPlan,
    policy: RetryPolicy,
    progress: Progress,
    gold: Mapping[str, Sequence[str]] | None = None,
) -> Replication:
    """Rerun the sample with ``system_of(state)``, judge it, compare to the original."""
    sample = replication_sample(sorted({r.question_id for r in answers}), plan.sample,
                                plan.seed)
    states = (plan.old, plan.new)
    systems = {s: system_of(s) for s in states}
    prefix = f"replicate:{plan.name}"
    keys = [AnswerKey(q, s, r) for q in sample for r in range(1, plan.repeats + 1)
            for s in states]
    cells = [answer_cell(systems[k.state], k, ask(k, questions[k.question_id],
                                                   evidence.get((k.question_id, k.state))),
                         plan.max_bytes) for k in keys]
    try:
        await run_stage(ledger, Stage(f"{prefix}:answer", cells, batchable=False,
                                      model=billed_model(systems.values())), policy, progress)
    finally:
        for system in systems.values():
            await system.aclose()
    chosen = set(sample)
    rep_rows = [r for r in answer_rows(ledger, questions, f"{prefix}:answer")
                if r.question_id in chosen]
    by_q: dict[str, list[AnswerRow]] = {}
    for row in rep_rows:
        by_q.setdefault(row.question_id, []).append(row)
    judged = [cell for q in sample for cell in judge_cells(
        judge, q, questions[q], [(AnswerRef(r.state, r.repeat), r.answer) for r in by_q[q]],
        plan.seed)]
    await run_stage(ledger, Stage(f"{prefix}:judge:{judge.name}", judged, batchable=False,
                                  model=judge.model), policy, progress)
    rep_labels = [lab for lab in labels_of_stage(ledger, judge.name,
                                                 f"{prefix}:judge:{judge.name}")
                  if lab.question_id in chosen]
    config = AnalysisConfig(old=plan.old, new=plan.new, draws=plan.draws, seed=plan.seed,
                            benchmark="triviaqa" if plan.benchmark == "triviaqa" else "nq",
                            primary_judge=judge.name)
    sub_gold = {q: gold[q] for q in sample} if gold is not None else None
    replicated = analyze(rep_rows, config=config, labels=rep_labels, gold=sub_gold)
    orig_rows = [r for r in answers if r.question_id in chosen and r.state in states]
    orig_labels = [lab for lab in labels if lab.question_id in chosen
                   and lab.judge == plan.original_judge
                   and lab.a.state in states and lab.b.state in states]
    original = analyze(orig_rows, labels=orig_labels, gold=sub_gold,
                       config=replace(config, primary_judge=plan.original_judge))
    paired = {}
    for kernel, pq in replicated.per_question.items():
        if kernel in original.per_question:
            diff = 100 * (pq.d - original.per_question[kernel].d)
            paired[kernel] = whole_question_bootstrap(diff, plan.draws, plan.seed).summary()
    return Replication(tuple(sample), original, replicated, paired, _scope_note(plan))


# ---------------------------------------------------------------- run directories


def _no_sources(pass_no: int) -> Any:
    raise LockError("the replication reuses locked evidence and never retrieves")


async def replicate_run_dir(run_dir: Path, generator: GeneratorConfig, sample: int,
                            states: tuple[str, str] | None, judge_config: JudgeConfig | None,
                            progress: Progress) -> tuple[Replication, Path]:
    """Replicate a testbed run's old and new states with ``generator``; write the result."""
    from snapaudit.judge.registry import build_judge
    from snapaudit.judge.spec import generator_name
    from snapaudit.run.record.rundir import RunDir
    from snapaudit.tables import read_answers, read_gold, read_labels
    from snapaudit.testbed.system import TestbedSystem

    rd = RunDir(run_dir)
    protocol = rd.load_protocol()
    if protocol.system.kind != "testbed":
        raise ConfigError("replicate reruns the locked prompt and evidence of the built-in "
                          "testbed; an HTTP system exposes neither")
    if not rd.table("labels").exists():
        raise LockError("replicate needs a run past its semantic lock (tables/labels.jsonl)")
    answers = read_answers(rd.table("answers"))
    labels = read_labels(rd.table("labels"), answers)
    gold = read_gold(rd.table("gold")) if rd.table("gold").exists() else None
    judge_config = judge_config or protocol.judge
    if not judge_kind(judge_config.kind).packets:
        raise ConfigError("the run's judge imports labels; name a judge with --judge")
    old, new = states or (protocol.states.old, protocol.states.new)
    name = generator_name(generator)
    plan = ReplicationPlan(name, old, new, sample, protocol.design.seed,
                           protocol.design.repeats, protocol.bootstrap.draws,
                           protocol.gold.benchmark, protocol.judge.name, protocol.judge.scope,
                           max_answer_bytes(protocol))
    resources = RunResources()  # this replication's: one generator, its keys (secrets)
    policy = retry_policy(protocol.run, protocol.design.seed, secrets=resources.secrets)
    questions = {row.question_id: row.question or "" for row in answers}
    try:
        judge = build_judge(judge_config, resources)
        try:
            with rd:
                ledger = rd.ledger()
                result = await run_replication(
                    ledger, answers, labels, questions, locked_evidence(ledger),
                    lambda s: TestbedSystem(s, generator, _no_sources, resources), judge, plan,
                    policy, progress, gold)
        finally:
            await judge.aclose()
    finally:
        await resources.aclose()
    out = rd.replication(name)
    out.parent.mkdir(parents=True, exist_ok=True)
    body = {**result.to_json(), "generator": generator.model_dump(mode="json"),
            "judge": judge.spec(), "states": [old, new]}
    atomic.write_text(out, json.dumps(body, indent=2, sort_keys=True) + "\n")
    return result, out
