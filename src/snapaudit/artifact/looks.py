"""``verify`` of a sequential design's looks, no network.

Each ``look`` lock of ``locks.json`` binds a look's number, questions and decision, the
answers and primary-judge labels it read and its result
(:func:`snapaudit.stats.looks.look_record`). The verifier recomputes the analysis, and so
every look, from the artifact's tables; each lock must then equal the record of the
recomputed look over the same first questions of the answers table (cohort order).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from snapaudit.artifact.safety import load_json
from snapaudit.stats.looks import appearance, look_record
from snapaudit.stats.sequential import Sequential
from snapaudit.tables import AnswerRow, PairLabel


def check_looks(root: Path, answers: Sequence[AnswerRow], labels: Sequence[PairLabel],
                judge: str | None, recomputed: Sequential | None, failures: list[str]) -> None:
    """Append one line per look lock that its recomputation does not reproduce."""
    locks = [rec for rec, _ in load_json(root, "locks.json") if rec.get("stage") == "look"]
    if not locks:
        if recomputed is not None:
            failures.append("sequential: results.json has looks but locks.json has no look "
                            "lock")
        return
    if recomputed is None:
        failures.append("locks: look locks, but results.json has no sequential section")
        return
    order = appearance(answers)
    taken = {look.look: look for look in recomputed.looks}
    for rec in locks:
        stated = rec.get("content") or {}
        k, n = int(stated.get("look", 0)), int(stated.get("questions", 0))
        look = taken.get(k)
        if look is None:
            failures.append(f"look {k}: not one the recomputed analysis takes")
            continue
        keep = set(order[:n])
        now = look_record(look, [r for r in answers if r.question_id in keep],
                          [lab for lab in labels
                           if lab.question_id in keep and lab.judge == judge])
        failures += [f"look {k} lock: {key} differs from the recomputation"
                     for key in sorted(set(now) | set(stated)) if now.get(key) != stated.get(key)]
    if len(locks) != recomputed.looks_done:
        failures.append(f"sequential: {len(locks)} look lock(s), but the recomputed analysis "
                        f"takes {recomputed.looks_done} look(s)")
