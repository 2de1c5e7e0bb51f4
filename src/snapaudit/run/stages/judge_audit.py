"""The cross-judge audit: a second judge labels the same pairs of a blind question sample.

The sample is drawn before any outcome is read: questions are ordered by
``SHA-256("snapaudit/judge-audit/v1" NUL str(seed) NUL question_id)`` and the first
``n`` are taken, so it depends only on the seed and the question ids. For each
sampled question the second judge sees a packet of exactly the answers the
primary judge labelled (same scope, same pairs), built by
:func:`snapaudit.run.stages.judge.judge_cells` (one packet; the call is metered, so its
tokens reach ``usage``). Its verdicts are accepted in the ledger under ``judge:<name>``;
agreement, Cohen's kappa, identical partitions, question-cluster bootstrap intervals and
semantic D under each judge come from
:func:`snapaudit.stats.agreement.agreement` and :mod:`snapaudit.stats.churn`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from snapaudit.errors import ConfigError, InputError
from snapaudit.judge.base import Judge
from snapaudit.progress import Progress
from snapaudit.run.execution.runner import RetryPolicy
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.stages.base import Stage, run_stage
from snapaudit.run.stages.judge import judge_cells, judge_stage_name, labels_of_stage
from snapaudit.run.stages.sample import hash_sample
from snapaudit.stats.agreement import JudgeAgreement, agreement
from snapaudit.stats.churn import per_question
from snapaudit.stats.kernels import AnswerGrid, SemanticKernel
from snapaudit.tables import AnswerRef, AnswerRow, PairLabel

SAMPLE_VERSION = "snapaudit/judge-audit/v1"


@dataclass(frozen=True, slots=True)
class AuditPlan:
    """What the audit compares: the primary judge, the states of D, seeds and draws."""

    primary: str
    old: str
    new: str
    sample: int
    seed: int
    draws: int = 10_000


def audit_sample(question_ids: Sequence[str], n: int, seed: int) -> list[str]:
    """The outcome-blind hash sample of :mod:`snapaudit.run.stages.sample`."""
    return hash_sample(question_ids, n, seed, SAMPLE_VERSION)


def _packet_answers(qid: str, labels: Sequence[PairLabel],
                    grid: AnswerGrid) -> list[tuple[AnswerRef, str]]:
    refs = sorted({ref for lab in labels for ref in (lab.a, lab.b)})
    if not refs:
        raise InputError(f"question {qid!r} has no labels of the primary judge")
    return [(ref, grid.answer(qid, ref)) for ref in refs]


def _d_hat(answers: Sequence[AnswerRow], labels: Sequence[PairLabel], judge: str,
           qids: set[str], old: str, new: str) -> float | None:
    rows = [r for r in answers if r.question_id in qids]
    try:
        grid = AnswerGrid.from_rows(rows)
        return 100 * per_question(grid, SemanticKernel(labels, judge), old, new).d_hat
    except InputError:
        return None


async def run_judge_audit(
    ledger: Ledger,
    answers: Sequence[AnswerRow],
    primary_labels: Sequence[PairLabel],
    questions: Mapping[str, str],
    judge: Judge,
    plan: AuditPlan,
    policy: RetryPolicy,
    progress: Progress,
) -> JudgeAgreement:
    """Label the sample with ``judge``, store it in the ledger, and compare it to the primary."""
    if judge.name == plan.primary:
        raise ConfigError(f"the audit judge needs a name other than {plan.primary!r}")
    grid = AnswerGrid.from_rows(answers)
    primary = [lab for lab in primary_labels if lab.judge == plan.primary]
    by_q: dict[str, list[PairLabel]] = {}
    for lab in primary:
        by_q.setdefault(lab.question_id, []).append(lab)
    sample = audit_sample(sorted(by_q), plan.sample, plan.seed)
    stage = judge_stage_name(judge.name)
    cells = [cell for qid in sample for cell in judge_cells(
        judge, qid, questions[qid], _packet_answers(qid, by_q[qid], grid), plan.seed)]
    await run_stage(ledger, Stage(stage, cells, batchable=False, model=judge.model), policy,
                    progress)
    second = [lab for lab in labels_of_stage(ledger, judge.name) if lab.question_id in sample]
    chosen = set(sample)
    both = [lab for lab in primary if lab.question_id in chosen] + second
    d_hat = {name: _d_hat(answers, both, name, chosen, plan.old, plan.new)
             for name in (plan.primary, judge.name)}
    result = agreement(both, plan.primary, judge.name, d_hat, plan.draws, plan.seed)
    if result is None:
        raise InputError("the audit sample has no pair labelled by both judges")
    return result
