"""The report's "People in the loop" section: the change review and the human judges.

The change review is shown as its table stands now (:attr:`RunView.review`, the standing
decisions of ``snapaudit review``); the human judges as ``results.json`` ``judges.human``
holds them (locked labels, from the last analysis).
"""

from __future__ import annotations

from snapaudit.report.model import Section, Table, interval, num
from snapaudit.results import ReviewSummary
from snapaudit.stats.human_agreement import Comparison, HumanJudges


def _review(review: ReviewSummary) -> tuple[str, list[Table]]:
    par = (f"Change review: {review.reviewed} of {review.changed} changed questions "
           f"reviewed: {review.regressions} regression(s), {review.improvements} "
           f"improvement(s), {review.neutral} neutral, {review.unclear} unclear "
           "(a question is a regression when any annotator's standing decision says so; "
           "`--fail-on regressions` then exits 6).")
    tables = [Table("Standing decisions by annotator",
                    ("annotator", "reviewed", "regressions", "improvements", "neutral",
                     "unclear"),
                    tuple((a, *(str(n) for n in (c.reviewed, c.regressions, c.improvements,
                                                  c.neutral, c.unclear)))
                          for a, c in sorted(review.by_annotator.items())))]
    if review.regressions_list:
        tables.append(Table("Reviewed regressions", ("question", "annotator", "note"),
                            tuple((r.question_id, r.annotator, r.note or "-")
                                  for r in review.regressions_list)))
    return par, tables


def _human(human: HumanJudges) -> Table:
    rows = [_row(name, human.primary, human.vs_primary[name])
            for name in sorted(human.vs_primary)]
    rows += [_row(a, b, c) for a, b, c in human.between]
    return Table("Human judges (blind pair labels; unsure left out)",
                 ("judge", "against", "pairs", "unsure", "agreement", "Cohen's kappa",
                  "identical partitions", "semantic D (pp), this / other"), tuple(rows))


def _row(name: str, other: str, c: Comparison) -> tuple[str, ...]:
    j = c.agreement
    if j is None or not j.pairs:
        return (name, other, "0", str(c.unsure), "-", "-", "-", "-")
    d = j.d_hat
    return (name, other, str(j.pairs), str(c.unsure),
            f"{num(j.agreement)} {interval(j.agreement_ci95)}",
            f"{num(j.kappa)} {interval(j.kappa_ci95)}",
            f"{num(j.partitions_identical)} {interval(j.partitions_identical_ci95)}",
            f"{num(d.get(name))} / {num(d.get(other))} on {c.d_questions} questions")


def review_section(review: ReviewSummary | None, human: HumanJudges | None
                   ) -> Section | None:
    """The section, or None when the run has neither decisions nor locked human labels."""
    if review is None and human is None:
        return None
    paragraphs: list[str] = []
    tables: list[Table] = []
    if review is not None:
        par, review_tables = _review(review)
        paragraphs.append(par)
        tables += review_tables
    if human is not None:
        tables.append(_human(human))
    return Section("People in the loop", tuple(paragraphs), tuple(tables))
