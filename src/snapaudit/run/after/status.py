"""``snapaudit status DIR``: stage progress, attempts by outcome and locks, after a full
integrity check of the run directory (protocol, cohort manifest, ledger content, lock chain).

A cell may have more attempts than ``[run] max_attempts``: the failed probes of an open
circuit breaker do not count against it. Their attempt rows are marked, and each stage counts
them apart (``failed_probes``), so every cell's attempts are explained by the ledger.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snapaudit.errors import ConfigError, IntegrityError, failure_lines
from snapaudit.judge.registry import judge_kind
from snapaudit.results import read_results
from snapaudit.run.execution.batch_status import batch_lines, batch_summary
from snapaudit.run.execution.failures import describe
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.locks import content_now, verify_chain, verify_run_files
from snapaudit.run.record.review_store import checked_label_locks
from snapaudit.run.record.rundir import LEDGER_NAME, RunDir
from snapaudit.run.stages.keys import endpoint_of


@dataclass(frozen=True, slots=True)
class StageStatus:
    stage: str
    planned: int | None
    accepted: int
    attempts: dict[str, int]
    # failed attempts: {"reasons": {reason: count}, "last_error": {endpoint: error}}
    failures: dict[str, dict[str, Any]] = field(default_factory=dict)
    failed_probes: int = 0  # of the transport-invalid attempts: failed breaker probes


@dataclass(frozen=True, slots=True)
class LockInfo:
    seq: int
    stage: str
    record_hash: str
    content: dict[str, str]
    history: dict[str, str] | None = None  # a version-2 lock's attempt history (not hashed)


@dataclass(frozen=True, slots=True)
class RunStatus:
    run_dir: Path
    name: str
    stages: list[StageStatus]
    locks: list[LockInfo]
    results: bool
    gate_passed: bool | None = None
    gate_verdict: str | None = None
    verdict: str | None = None
    notes: list[str] = field(default_factory=list)
    # what the integrity check covered: locked stages (content bound by the lock chain) and
    # ledger stages without a lock (each accepted cell checked against its own hash/attempt)
    locked_verified: list[str] = field(default_factory=list)
    open_verified: dict[str, int] = field(default_factory=dict)
    batches: dict[str, Any] = field(default_factory=dict)  # run.mode = "batch" only

    def to_json(self) -> dict[str, Any]:
        return {
            "run_dir": str(self.run_dir), "name": self.name, "results": self.results,
            "gate_passed": self.gate_passed, "gate_verdict": self.gate_verdict,
            "verdict": self.verdict,
            "stages": [vars_of(s) for s in self.stages],
            "locks": [vars_of(lk) for lk in self.locks],
            "integrity": {"files": ["protocol.resolved.toml", "cohort.json", "ledger meta"],
                          "locked_stages": self.locked_verified,
                          "open_stages_cells_checked": self.open_verified},
            **({"batches": self.batches} if self.batches else {}),
        }


def vars_of(obj: Any) -> dict[str, Any]:
    return {k: getattr(obj, k) for k in obj.__slots__}


def run_status(run_dir: Path) -> RunStatus:
    """Verify a run directory and summarize it; IntegrityError names anything changed."""
    with RunDir(run_dir, read_only=True) as rd:
        return _status(rd)


def _status(rd: RunDir) -> RunStatus:
    if not rd.has_ledger() and not rd.began_files():
        raise ConfigError(f"{rd.path} is not a run directory (no {LEDGER_NAME})")
    verify_run_files(rd)
    protocol = rd.load_protocol()
    ledger = rd.ledger()
    stored_hash = ledger.get_meta("protocol_sha256")
    base_dir = Path(ledger.get_meta("base_dir") or ".")
    content = content_now(ledger, protocol, base_dir)
    records = verify_chain(ledger.locks(), content)
    for rec in records:
        if rec.depends.get("protocol_sha256") != stored_hash:
            raise IntegrityError(f"{rec.stage} lock: dependency 'protocol_sha256' changed")
    hashes = [h for _, h in ledger.locks()]
    counts = ledger.outcome_counts()
    probes = ledger.failed_probes()
    questions = len(json.loads(rd.cohort_path.read_text("utf-8"))["questions"])
    n_states = len(protocol.states.order)
    planned = {"answer": questions * n_states * protocol.design.repeats}
    if judge_kind(protocol.judge.kind).labels:
        planned[f"judge:{protocol.judge.name}"] = questions
    names = sorted(set(counts) | set(planned), key=_stage_order)
    stages = [StageStatus(s, planned.get(s), len(ledger.accepted_keys(s)),
                          counts.get(s, {}), _failures(ledger, s), probes.get(s, 0))
              for s in names]
    locks = [LockInfo(r.seq, r.stage, h, r.content, r.history)
             for r, h in zip(records, hashes, strict=True)]
    results_path = rd.results_path
    gate: bool | None = None
    label: str | None = None
    verdict: str | None = None
    if results_path.exists():
        result = read_results(results_path).analysis
        gate, label, verdict = result.gate.passed, result.verdict().line(), result.gate.verdict
    judge_stage = f"judge:{protocol.judge.name}"
    ledger_stage = {"semantic": judge_stage}
    locked: list[str] = [r.stage for r in records]
    bound = {ledger_stage.get(s, s) for s in locked}
    if "attribution" in locked:  # the attribution lock also binds its judge packets
        bound.add(f"attribution:{judge_stage}")
    for lock in checked_label_locks(ledger):  # snapaudit review: an annotator's label lock
        locked.append(lock.stage)
        bound.add(lock.stage)
    open_checked = {s: n for s, n in rd.cells_verified.items() if s not in bound}
    return RunStatus(rd.path, protocol.name, stages, locks, results_path.exists(), gate,
                     verdict=label, locked_verified=locked, open_verified=open_checked,
                     gate_verdict=verdict, batches=batch_summary(ledger))


def _failures(ledger: Ledger, stage: str) -> dict[str, dict[str, Any]]:
    reasons: Counter[str] = Counter()
    last: dict[str, str] = {}
    for key, reason, error in ledger.failed_attempts(stage):
        reasons[reason] += 1
        last[endpoint_of(stage, key)] = describe(reason, error)
    return {"reasons": dict(reasons), "last_error": last} if reasons else {}


def _stage_order(stage: str) -> tuple[int, str]:
    order = {"retrieval": 0, "answer": 1}
    return (order.get(stage, 2), stage)


def format_status(status: RunStatus) -> str:
    """Plain-text status for the terminal."""
    lines = [f"run {status.name} in {status.run_dir}", "", "stages:"]
    for s in status.stages:
        planned = f"/{s.planned}" if s.planned is not None else ""
        attempts = ", ".join(f"{k} {v}" for k, v in sorted(s.attempts.items())) or "none"
        lines.append(f"  {s.stage:<16} accepted {s.accepted}{planned}   attempts: {attempts}")
        if s.failed_probes:
            lines.append(f"    of which {s.failed_probes} failed breaker probe(s): not counted "
                         "against max_attempts")
        if s.failures:
            lines += [f"    {w}" for w in failure_lines(s.failures["reasons"],
                                                       s.failures["last_error"])]
    lines += batch_lines(status.batches)
    lines += ["", "locks:"]
    if not status.locks:
        lines.append("  (none yet)")
    for lk in status.locks:
        look = (f"  look {lk.content.get('look')}: {lk.content.get('questions')} questions, "
                f"{lk.content.get('decision')}" if lk.stage == "look" else "")
        lines.append(f"  {lk.seq}. {lk.stage:<10} {lk.record_hash[:16]}{look}{covers(lk)}")
    lines.append("")
    if status.results:
        lines.append(f"results.json written; verdict: {status.verdict or '-'}")
    else:
        lines.append("results.json not written yet")
    lines += integrity_lines(status)
    return "\n".join(lines)


def covers(lock: LockInfo) -> str:
    """What a lock's hash binds, in words (ledger stages; gold says its file by name)."""
    cells = lock.content.get("n_cells", lock.content.get("answers_n_cells"))
    if cells is None:
        return ""
    if lock.history is None:  # a version-1 lock bound every attempt too
        return f"  binds {cells} accepted cells and every attempt"
    attempts = lock.history.get("n_attempts", lock.history.get("answers_n_attempts", "?"))
    return f"  binds {cells} accepted cells ({attempts} attempts checked, not hashed)"


def integrity_lines(status: RunStatus) -> list[str]:
    """Exactly what the integrity check of :func:`run_status` covered."""
    lines = ["integrity: protocol, protocol.resolved.toml and cohort.json match the ledger"]
    if status.locked_verified:
        lines.append("  locked stages (cells, attempts or gold file match the lock chain): "
                     + ", ".join(status.locked_verified))
    else:
        lines.append("  locked stages: none yet")
    if status.open_verified:
        shown = ", ".join(f"{s} ({n} cells)" for s, n in sorted(status.open_verified.items()))
        lines.append("  stages without a lock (each accepted cell matches its payload hash "
                     f"and its attempt; not yet bound by a lock): {shown}")
    return lines
