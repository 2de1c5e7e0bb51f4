"""The review in an artifact: exported with the run, recomputed offline by ``verify``.

``export`` writes ``review/decisions.jsonl`` (every decision row, oldest first) and
``review/label_locks.jsonl`` (the annotators' label locks) when the run has them; the
human labels are the ledger stages ``human:NAME`` (``ledger/human_NAME.cells.jsonl``), as
every stage. ``verify`` then checks, with no text and no network:

* the decision rows form their hash chain, each is bound to the artifact's semantic lock,
  and each ``shown_sha256`` equals the hash of the locked answers it names (the question and
  gold by the artifact's own hashes of them);
* each label lock's content hash equals the hash of its stage's exported cells;
* ``results.json`` ``review`` equals the summary recomputed over the decision chain's prefix
  it names, and ``judges.human`` is recomputed (its numbers are claims).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from snapaudit.artifact.safety import load_json, load_jsonl, stage_content
from snapaudit.errors import IntegrityError
from snapaudit.hashing import canonical_json
from snapaudit.results import ReviewSummary, RunResults
from snapaudit.run.analysis.review import review_summary
from snapaudit.run.record.review_items import decode_human, shown_digest
from snapaudit.run.record.review_store import (
    DecisionRow,
    LabelLock,
    check_decision_chain,
    label_lock_content,
)
from snapaudit.stats.analysis import Comparison
from snapaudit.stats.changes import listed_questions
from snapaudit.stats.human_agreement import HumanJudges, human_judges
from snapaudit.stats.kernels import AnswerGrid, ExactKernel, Kernel, SemanticKernel
from snapaudit.stats.normalize import normalizer
from snapaudit.tables import AnswerRow, PairLabel

DECISIONS = "review/decisions.jsonl"
LABEL_LOCKS = "review/label_locks.jsonl"


def export_review(ledger: Path, db: sqlite3.Connection, dest: Path) -> None:
    """Write the review tables of the open read-only ledger ``db`` into ``dest/review``."""
    from snapaudit.run.record.review_store import read_review_tables

    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    if "review_decisions" not in names:
        return
    rows, locks = read_review_tables(ledger)
    (dest / "review").mkdir()
    for name, items in ((DECISIONS, rows), (LABEL_LOCKS, locks)):
        (dest / name).write_text("".join(canonical_json(x.to_json()) + "\n" for x in items),
                                 encoding="utf-8")


def _bound(root: Path) -> str | None:
    for record, digest in load_json(root, "locks.json"):
        if record.get("stage") == "semantic":
            return str(digest)
    return None


def _texts(rows: Sequence[AnswerRow], qid: str, state: str) -> tuple[str, ...]:
    return tuple(r.answer for r in sorted((r for r in rows if r.question_id == qid
                                           and r.state == state), key=lambda r: r.repeat))


def _shown(root: Path, answers: Sequence[AnswerRow], old: str, new: str
           ) -> Callable[[DecisionRow], str | None]:
    """The shown hash of a decision recomputed from the artifact (None: question unknown)."""
    cohort = load_json(root, "cohort.json") or {}
    question = {str(q["question_id"]): q.get("question") for q in cohort.get("questions", [])}
    gold = load_json(root, "gold.sha256.json") if (root / "gold.sha256.json").exists() else {}

    def shown(row: DecisionRow) -> str | None:
        q = question.get(row.question_id)
        if not isinstance(q, dict) or "sha256" not in q:
            return None
        return shown_digest(row.question_id, str(q["sha256"]), old, new,
                            _texts(answers, row.question_id, old),
                            _texts(answers, row.question_id, new),
                            gold.get(row.question_id) if row.gold_shown else None)

    return shown


def _human(root: Path, locks: Sequence[LabelLock], failures: list[str]
           ) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for lock in locks:
        if label_lock_content(stage_content(root, lock.stage)) != lock.content_sha256:
            failures.append(f"review: the labels of {lock.stage} differ from their lock")
            continue
        name = lock.stage.replace(":", "_")
        out[lock.stage] = [x for c in load_jsonl(root, f"ledger/{name}.cells.jsonl")
                           for x in decode_human(c["payload"], lock.stage)]
    return out


def _kernel(grid: AnswerGrid, labels: Sequence[PairLabel], primary: str | None,
            benchmark: str) -> Kernel:
    if primary is not None and any(lab.judge == primary for lab in labels):
        return SemanticKernel(labels, primary)
    return ExactKernel(grid, normalizer(benchmark))


def check_review(root: Path, results: RunResults, answers: Sequence[AnswerRow],
                 labels: Sequence[PairLabel], failures: list[str]
                 ) -> tuple[ReviewSummary | None, HumanJudges | None]:
    """Check the exported review; return ``review`` and ``judges.human`` recomputed (for
    the sections ``results`` states; None for the others)."""
    rows = [DecisionRow.from_json(r) for r in load_jsonl(root, DECISIONS)]
    locks = [LabelLock.from_json(r) for r in load_jsonl(root, LABEL_LOCKS)]
    comp = results.analysis.comparison
    semantic = results.analysis.kernels.get("semantic")
    primary = semantic.judge if semantic else None
    bound = _bound(root)
    try:
        check_decision_chain(rows)
    except IntegrityError as exc:
        failures.append(f"review: {exc}")
    shown = _shown(root, answers, comp.old, comp.new)
    for i, row in enumerate(rows, start=1):
        where = f"review decision #{i} ({row.annotator}, {row.question_id})"
        if row.bound_sha256 != bound:
            failures.append(f"{where}: bound to another run (not this semantic lock)")
        elif shown(row) != row.shown_sha256:
            failures.append(f"{where}: what it says was shown is not the locked answers")
    review = (_review(rows, results.review, answers, labels, comp, primary, bound, failures)
              if results.review is not None else None)
    human = None
    if results.human is not None:
        found = _human(root, locks, failures)
        first = [lab for lab in labels if lab.judge == results.human.primary]
        human = human_judges(answers, first, results.human.primary, found, comp.old,
                             comp.new, comp.draws, comp.seed)
    return review, human


def _review(rows: Sequence[DecisionRow], stated: ReviewSummary, answers: Sequence[AnswerRow],
            labels: Sequence[PairLabel], comp: Comparison, primary: str | None,
            bound: str | None, failures: list[str]) -> ReviewSummary | None:
    """The review over the decision chain's prefix ``stated`` names, recomputed."""
    grid = AnswerGrid.from_rows(answers)
    norm = normalizer(comp.benchmark)
    kernel = _kernel(grid, labels, primary, comp.benchmark)
    changed = [q for q, _ in listed_questions(grid, kernel, comp.old, comp.new, norm)]
    try:
        again = review_summary(rows[:stated.decisions], changed, bound or "")
    except IntegrityError:
        again = None
    if again != stated:
        failures.append("results.json review: differs from the review recomputed from "
                        "review/decisions.jsonl")
    return again
