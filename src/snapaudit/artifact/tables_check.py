"""An artifact's answer and label tables against its ledger cells (``snapaudit verify``).

Every row of ``tables/answers.jsonl`` equals its answer cell (answer, document ids, their
content hashes and the published steps) and no cell lacks a row; each judge's labels in
``tables/labels.jsonl`` equal that judge's own ledger cells.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from snapaudit.artifact.safety import load_jsonl
from snapaudit.run.stages.keys import AnswerKey
from snapaudit.run.stages.payloads import decode_labels
from snapaudit.tables import AnswerRow, PairLabel
from snapaudit.tables.steps import steps_record


def check_tables(root: Path, answers: Sequence[AnswerRow], labels: list[PairLabel],
                 failures: list[str], notes: list[str]) -> None:
    """Append to ``failures`` every row that differs from its cell, every cell without a
    row and every judge whose labels differ from its cells."""
    cells = {c["cell_key"]: c["payload"] for c in load_jsonl(root, "ledger/answer.cells.jsonl")}
    if not cells:
        notes.append("no ledger cells in the artifact; tables checked by claims only")
        return
    for row in answers:
        cell = cells.pop(AnswerKey(row.question_id, row.state, row.repeat).encode(), None)
        ids = list(row.doc_ids) if row.doc_ids is not None else None
        hashes = list(row.doc_hashes) if row.doc_hashes is not None else None
        steps = steps_record(row.steps) if row.steps is not None else None
        turns = list(row.turn_answers) if row.turn_answers is not None else None
        if cell is None or cell.get("answer") != row.answer or cell.get("doc_ids") != ids \
                or cell.get("doc_hashes") != hashes or cell.get("steps") != steps \
                or cell.get("turn_answers") != turns:
            failures.append(f"tables/answers.jsonl: row {row.question_id}/{row.state}/"
                            f"{row.repeat} differs from the answer ledger")
    failures += [f"tables/answers.jsonl: ledger cell {k} missing" for k in sorted(cells)]
    check_labels(root, labels, failures)


def check_labels(root: Path, labels: list[PairLabel], failures: list[str]) -> None:
    """Each judge's labels in the table equal that judge's own ledger cells (the protocol's
    judge under ``judge:<name>``, and every ``judge-audit`` judge under its own stage)."""
    ledger: dict[str, set[tuple[Any, ...]]] = {}
    for path in sorted((root / "ledger").glob("judge_*.cells.jsonl")):
        name = path.name.removeprefix("judge_").removesuffix(".cells.jsonl")
        found = ledger.setdefault(name, set())
        for c in load_jsonl(root, f"ledger/{path.name}"):
            try:
                decoded = decode_labels(c["cell_key"], c["payload"], name)
            except ValueError as exc:
                failures.append(f"ledger/{path.name}: {exc}")
                continue
            found |= {(lab.question_id, (lab.a.state, lab.a.repeat),
                       (lab.b.state, lab.b.repeat), lab.same) for lab in decoded}
    if not any(ledger.values()):
        return
    table: dict[str, set[tuple[Any, ...]]] = {}
    for lab in labels:
        table.setdefault(lab.judge, set()).add(
            (lab.question_id, (lab.a.state, lab.a.repeat), (lab.b.state, lab.b.repeat),
             lab.same))
    for name in sorted(set(ledger) | set(table)):
        if table.get(name, set()) != ledger.get(name, set()):
            failures.append(f"tables/labels.jsonl: labels of judge {name!r} differ "
                            "from that judge's ledger cells")
