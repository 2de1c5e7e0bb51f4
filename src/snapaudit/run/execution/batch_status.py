"""The batches of a run (``[run] mode = "batch"``): the part of ``snapaudit status`` that
lists them, and ``snapaudit run --forget-batch``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from snapaudit.errors import ConfigError
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.ledger.batches import BatchRow
from snapaudit.run.record.rundir import RunDir

SHOWN = 20  # batches listed one by one (open ones first, then the latest ended)


def batch_summary(ledger: Ledger) -> dict[str, Any]:
    """``{"by_state": {stage: {state: n}}, "batches": [...]}``; empty when none was made."""
    rows = ledger.batches()
    if not rows:
        return {}
    by_state: dict[str, Counter[str]] = {}
    for row in rows:
        by_state.setdefault(row.stage, Counter())[row.state] += 1
    chosen = [r for r in rows if r.state != "ended"] + [r for r in rows if r.state == "ended"
                                                        ][::-1]
    listed = [{"local_id": r.local_id, "stage": r.stage, "provider": r.provider,
               "state": r.state, "provider_batch_id": r.provider_batch_id,
               "provider_status": r.provider_status, "requests": r.n_requests}
              for r in chosen[:SHOWN]]
    return {"by_state": {s: dict(c) for s, c in by_state.items()}, "batches": listed,
            "total": len(rows)}


def batch_lines(summary: dict[str, Any]) -> list[str]:
    if not summary:
        return []
    lines = ["", "provider batches:"]
    for stage, counts in summary["by_state"].items():
        shown = ", ".join(f"{state} {n}" for state, n in sorted(counts.items()))
        lines.append(f"  {stage:<16} {shown}")
    for b in summary["batches"]:
        status = f" ({b['provider_status']})" if b["provider_status"] else ""
        lines.append(f"  {b['local_id']:<22} {b['stage']:<10} {b['provider']:<9} "
                     f"{b['state']:<10} {b['provider_batch_id'] or '(no provider id yet)'}"
                     f"{status}, {b['requests']} requests")
    if summary["total"] > len(summary["batches"]):
        lines.append(f"  ... {summary['total'] - len(summary['batches'])} more ended batches")
    return lines


def forget_batches(run_dir: Path, local_ids: Sequence[str]) -> list[BatchRow]:
    """End the open batches ``local_ids`` of the run in ``run_dir`` without results (their
    provider deleted them): their requests go into a new batch when the run resumes."""
    rd = RunDir(run_dir)
    if not rd.has_ledger():
        raise ConfigError(f"{run_dir}: no run here, so no batch to forget")
    with rd:
        ledger = rd.ledger()
        return [ledger.forget_batch(local_id) for local_id in dict.fromkeys(local_ids)]
