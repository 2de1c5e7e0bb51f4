"""The judge audit of a run directory: read its tables, run the audit, write the result."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from snapaudit import atomic
from snapaudit.errors import LockError
from snapaudit.judge.config import JudgeConfig
from snapaudit.judge.registry import build_judge
from snapaudit.progress import Progress
from snapaudit.run.execution.interrupt import interruptible
from snapaudit.run.record.rundir import RunDir
from snapaudit.run.stages.base import retry_policy
from snapaudit.run.stages.judge_audit import AuditPlan, run_judge_audit
from snapaudit.run.systems import run_resources
from snapaudit.stats.agreement import JudgeAgreement
from snapaudit.tables import read_answers, read_labels


def audit_path(run_dir: Path, judge_name: str) -> Path:
    return RunDir(run_dir).judge_audit(judge_name)


async def audit_run_dir(rd: RunDir, judge_config: JudgeConfig, sample: int,
                        progress: Progress) -> tuple[JudgeAgreement, Path]:
    """Audit the primary judge of ``run_dir`` with ``judge_config`` on ``sample`` questions.

    Needs the semantic lock (``DIR/tables/labels.jsonl``); writes
    ``DIR/judge-audit/<name>.json`` and returns the agreement and that path.
    """
    protocol = rd.load_protocol()
    labels_file = rd.table("labels")
    if not labels_file.exists():
        raise LockError(f"{labels_file} not found: run the semantic stage before the audit")
    answers = read_answers(rd.table("answers"))
    labels = read_labels(labels_file, answers)
    questions = {r.question_id: r.question or "" for r in answers}
    plan = AuditPlan(primary=protocol.judge.name, old=protocol.states.old,
                     new=protocol.states.new, sample=sample, seed=protocol.design.seed,
                     draws=protocol.bootstrap.draws)
    resources = run_resources(protocol)  # this audit's: its judge's key and generator
    policy = retry_policy(protocol.run, protocol.design.seed, secrets=resources.secrets)
    try:
        judge = build_judge(judge_config, resources)
        try:
            result = await run_judge_audit(rd.ledger(), answers, labels, questions, judge,
                                           plan, policy, progress)
        finally:
            await judge.aclose()
    finally:
        await resources.aclose()
    out = rd.judge_audit(judge.name)
    out.parent.mkdir(parents=True, exist_ok=True)
    body = {"schema": "snapaudit/judge-audit/v1", "judge": judge.spec(),
            "primary": plan.primary, "sample": sample, "seed": plan.seed, **result.to_json()}
    atomic.write_text(out, json.dumps(body, indent=2, sort_keys=True) + "\n")
    return result, out


@dataclass(frozen=True, slots=True)
class JudgeAuditOutcome:
    agreement: JudgeAgreement
    audit_path: Path
    results_path: Path | None


def judge_audit(run_dir: Path, judge_config: JudgeConfig, sample: int,
                progress: Progress) -> JudgeAuditOutcome:
    """``snapaudit judge-audit``: audit, then, for a finished engine run (one with
    ``results.json``), re-analyse it so the second judge's labels reach
    ``tables/labels.jsonl`` and the ``judges`` section of ``results.json``."""
    with interruptible() as run, RunDir(run_dir) as rd:
        agreement, path = run(audit_run_dir(rd, judge_config, sample, progress))
        results: Path | None = None
        if rd.results_path.exists() and rd.has_ledger():
            from snapaudit.run.engine import reanalyze

            results = reanalyze(rd, progress).results_path
    return JudgeAuditOutcome(agreement, path, results)
