"""``verify`` of the attribution stage (``snapaudit attribute``), no network.

The exported ``ledger/attribution.*`` and ``ledger/attribution_judge_<judge>.*`` rows give the
attribution lock's content back (:func:`lock_content`); the ``attribution`` section of
``results.json`` is then recomputed from the locked rows alone (the answer table's doc ids and
answers, the primary judge's labels, the counterfactual answers and their judge labels) with
:func:`snapaudit.run.after.attribution_table.section`, and must equal the stated one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from snapaudit.artifact.safety import load_jsonl
from snapaudit.judge.registry import JUDGES, judge_kind
from snapaudit.stats.attribution import AttributionSection
from snapaudit.tables import AnswerRow, PairLabel

STAGE = "attribution"


def judge_of(protocol: dict[str, Any], *, packets: bool = True) -> str | None:
    """The judge whose packets the attribution stage holds (``packets``) or whose labels
    give the semantic kernel; None: the exact kernel alone."""
    judge = protocol.get("judge") or {}
    kind = str(judge.get("kind"))
    if kind not in JUDGES:
        return None
    able = judge_kind(kind).packets if packets else judge_kind(kind).labels
    return str(judge.get("name", "judge")) if able else None


def _cells(root: Path, stage: str) -> list[tuple[str, dict[str, Any]]]:
    rows = load_jsonl(root, f"ledger/{stage.replace(':', '_')}.cells.jsonl")
    return [(str(c["cell_key"]), c["payload"]) for c in rows]


def lock_content(root: Path, protocol: dict[str, Any],
                 content_of: Callable[[Path, str], dict[str, str]]) -> dict[str, str]:
    """What the attribution lock binds, recomputed from the exported rows (``content_of``:
    a stage's content hashes from its exported cells and attempts)."""
    out = {f"answers_{k}": v for k, v in content_of(root, STAGE).items()}
    judge = judge_of(protocol)
    if judge is not None:
        out |= {f"judge_{k}": v for k, v in content_of(root, f"{STAGE}:judge:{judge}").items()}
    return out


def recompute_section(root: Path, protocol: dict[str, Any], answers: Sequence[AnswerRow],
                      labels: Sequence[PairLabel], stated: AttributionSection
                      ) -> AttributionSection:
    """The attribution section recomputed from the artifact's locked rows."""
    from snapaudit.run.after.attribution_table import Selection, evidence_lists, section
    from snapaudit.run.stages.attribution import judge_stage

    states = protocol["states"]
    judge, primary_judge = judge_of(protocol), judge_of(protocol, packets=False)
    sel = Selection(str(states["old"]), str(states["new"]), primary_judge, judge is not None,
                    str((protocol.get("gold") or {}).get("benchmark", "nq")),
                    int(stated.max_questions or 0))
    primary = [lab for lab in labels if lab.judge == primary_judge]
    return section(answers, primary, sel, evidence_lists(answers, sel.old, sel.new),
                   _cells(root, STAGE),
                   _cells(root, judge_stage(judge)) if judge is not None else [])


def table_failures(stated: dict[str, Any], recomputed: dict[str, Any]) -> list[str]:
    """One line per question (or section key) whose stated row differs from the recomputed."""
    out = []
    rows, again = stated.get("questions", {}), recomputed.get("questions", {})
    for qid in sorted(set(rows) | set(again)):
        if qid not in again:
            out.append(f"attribution: question {qid} is not one the locked rows attribute")
        elif qid not in rows:
            out.append(f"attribution: question {qid} is missing from results.json")
        elif rows[qid] != again[qid]:
            out.append(f"attribution: question {qid}: stated verdict "
                       f"{rows[qid].get('verdict')!r}, recomputed {again[qid]['verdict']!r}"
                       + ("" if rows[qid].get("verdict") != again[qid]["verdict"]
                          else " (other fields differ)"))
    out += [f"attribution: {key} differs from the recomputation" for key in sorted(
        k for k in set(stated) | set(recomputed)
        if k != "questions" and stated.get(k) != recomputed.get(k))]
    return out
