"""``snapaudit status DIR --failures``: the latest failed attempt of each failing cell, with
its error and, for a Python system's exception, its traceback (redacted and bounded when it
was recorded, from the attempt's meta)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snapaudit.run.record.ledger import FAILED_PROBE
from snapaudit.run.record.rundir import RunDir


@dataclass(frozen=True, slots=True)
class FailedAttempt:
    stage: str
    cell_key: str
    attempt_no: int
    reason: str
    error: str | None
    traceback: str | None
    accepted_later: bool  # the cell was accepted by a later attempt
    failed_probe: bool = False  # a failed breaker probe (not counted against max_attempts)

    def to_json(self) -> dict[str, Any]:
        return {"stage": self.stage, "cell_key": self.cell_key, "attempt_no": self.attempt_no,
                "reason": self.reason, "error": self.error, "traceback": self.traceback,
                "accepted_later": self.accepted_later, "failed_probe": self.failed_probe}


def failed_attempts(run_dir: Path, *, per_stage: int = 10) -> list[FailedAttempt]:
    """The latest failed attempt of up to ``per_stage`` cells per stage (newest first);
    cells still without an accepted attempt come before those a retry accepted."""
    out: list[FailedAttempt] = []
    with RunDir(run_dir, read_only=True) as rd:
        ledger = rd.ledger()
        for stage in sorted(ledger.outcome_counts()):
            accepted = ledger.accepted_keys(stage)
            latest: dict[str, FailedAttempt] = {}
            for key, n, reason, error, meta in ledger.failure_details(stage):
                if key in latest:
                    continue
                marks = json.loads(meta) if meta else {}
                tb = marks.get("traceback")
                latest[key] = FailedAttempt(stage, key, n, reason, error,
                                            tb if isinstance(tb, str) else None,
                                            key in accepted, marks.get(FAILED_PROBE) is True)
            ranked = sorted(latest.values(), key=lambda f: f.accepted_later)  # stable
            out += ranked[:per_stage]
    return out


def format_failures(failures: list[FailedAttempt]) -> str:
    """The failures as terminal text (tracebacks indented under their attempt)."""
    if not failures:
        return "failures: none recorded"
    lines = ["failures (the latest failed attempt of each cell, unresolved first):"]
    for f in failures:
        state = "accepted later" if f.accepted_later else "not accepted"
        if f.failed_probe:
            state += "; a failed breaker probe, not counted against max_attempts"
        lines.append(f"  {f.stage} {f.cell_key} attempt {f.attempt_no} ({state}): "
                     f"{f.reason}" + (f": {f.error}" if f.error else ""))
        if f.traceback:
            lines += [f"      {line}" for line in f.traceback.rstrip("\n").splitlines()]
    return "\n".join(lines)
