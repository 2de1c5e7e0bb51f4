"""The review's numbers: ``results.json`` ``review`` and ``judges.human``, from a run's ledger.

``review`` counts the change questions by their *standing* decisions (the last decision of
each annotator on each question, bound to this run): a question is a ``regression`` when any
annotator's standing decision is ``regression``; otherwise, when its annotators agree, their
decision (``improvement``, ``neutral``, ``unclear``); otherwise ``unclear``. ``reviewed`` is the
number of change questions with a standing decision; ``by_annotator`` counts each
annotator's standing decisions; ``regressions`` lists every standing ``regression`` decision
(question, annotator, note, time). ``decisions`` and ``chain_sha256`` name the prefix of the
decision chain the numbers stand on (decisions made later are left to the next analysis).

``judges.human`` holds the human judges whose labels are locked (finished), each checked
against its lock (:mod:`snapaudit.stats.human_agreement`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from snapaudit.errors import IntegrityError
from snapaudit.results.sections import AnnotatorCounts, Regression, ReviewSummary
from snapaudit.run.analysis.locked_run import LockedRun
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.review_items import DECISIONS, decode_human
from snapaudit.run.record.review_store import (
    DecisionRow,
    LabelLock,
    check_decision_chain,
    label_lock_content,
)
from snapaudit.run.record.rundir import RunDir
from snapaudit.stats.human import HumanLabel
from snapaudit.stats.human_agreement import HumanJudges, human_judges


def standing(rows: Sequence[DecisionRow], bound: str) -> dict[tuple[str, str], DecisionRow]:
    """(annotator, question) -> the last decision bound to ``bound``."""
    out: dict[tuple[str, str], DecisionRow] = {}
    for row in rows:
        if row.bound_sha256 == bound:
            out[(row.annotator, row.question_id)] = row
    return out


def question_decision(decisions: Sequence[str]) -> str:
    if "regression" in decisions:
        return "regression"
    return decisions[0] if len(set(decisions)) == 1 else "unclear"


def review_summary(rows: Sequence[DecisionRow], changed: Sequence[str], bound: str
                   ) -> ReviewSummary:
    """The ``review`` section over ``rows`` (the whole chain, oldest first)."""
    check_decision_chain(rows)
    listed = set(changed)
    stand = {k: r for k, r in standing(rows, bound).items() if k[1] in listed}
    per_q: dict[str, list[str]] = {}
    by_annotator: dict[str, Counter[str]] = {}
    for (annotator, qid), row in sorted(stand.items()):
        per_q.setdefault(qid, []).append(row.decision)
        by_annotator.setdefault(annotator, Counter())[row.decision] += 1
    totals = Counter(question_decision(d) for d in per_q.values())
    regressions = tuple(Regression(q, a, r.note, r.at) for (a, q), r in
                        sorted(stand.items(), key=lambda kv: (kv[0][1], kv[0][0]))
                        if r.decision == "regression")
    regress, improve, neutral, unclear = (totals[d] for d in DECISIONS)
    return ReviewSummary(
        len(per_q), len(listed), regress, improve, neutral, unclear,
        by_annotator={a: AnnotatorCounts(sum(c.values()), *(c[d] for d in DECISIONS))
                      for a, c in by_annotator.items()},
        regressions_list=regressions, decisions=len(rows),
        chain_sha256=rows[-1].row_sha256 if rows else None)


def human_labels(ledger: Ledger, locks: Sequence[LabelLock]) -> dict[str, list[HumanLabel]]:
    """The labels of every locked human judge, each stage checked against its lock."""
    out: dict[str, list[HumanLabel]] = {}
    for lock in locks:
        if label_lock_content(ledger.content_hashes(lock.stage)) != lock.content_sha256:
            raise IntegrityError(f"the labels of {lock.stage} changed after they were locked")
        out[lock.stage] = [x for c in ledger.cells(lock.stage)
                           for x in decode_human(c.payload, lock.stage)]
    return out


def human_section(run: LockedRun, labels: Mapping[str, Sequence[HumanLabel]], draws: int,
                  seed: int) -> HumanJudges | None:
    if run.primary is None:
        return None
    return human_judges(run.answers, run.primary_labels, run.primary, labels, run.old, run.new,
                        draws, seed)


def review_sections(rd: RunDir) -> tuple[HumanJudges | None, ReviewSummary | None]:
    """``(judges.human, review)`` of a locked run; None for what it has not got."""
    from snapaudit.run.record.review_store import read_review_tables

    rows, locks = read_review_tables(rd.ledger_path)
    if not rows and not locks:
        return None, None
    run = LockedRun.load(rd)
    protocol = rd.load_protocol()
    human = human_section(run, human_labels(rd.ledger(), locks), protocol.bootstrap.draws,
                          protocol.bootstrap.seed) if locks else None
    review = (review_summary(rows, [r.question_id for r in run.changes()], run.bound)
              if rows else None)
    return human, review


def live_review(rd: RunDir) -> ReviewSummary | None:
    """The ``review`` section as the review table stands now (None without decisions):
    what ``snapaudit report`` shows and ``--fail-on regressions`` reads, so that decisions
    made after the last analysis count at once."""
    from snapaudit.run.record.review_store import read_review_tables

    if not rd.has_ledger():
        return None
    rows, _ = read_review_tables(rd.ledger_path)
    if not rows:
        return None
    run = LockedRun.load(rd)
    return review_summary(rows, [r.question_id for r in run.changes()], run.bound)


def standing_regressions(review: ReviewSummary | None) -> int:
    """The number of questions whose standing decision by some annotator is a regression."""
    return review.regressions if review else 0
