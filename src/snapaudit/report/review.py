"""The report's "People in the loop" section: the change review and the human judges.

The change review is shown as its table stands now (:attr:`RunView.review`, the standing
decisions of ``snapaudit review``); the human judges as ``results.json`` ``judges.human``
holds them (locked labels, from the last analysis).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from snapaudit.report.model import Section, Table, interval, num


def _review(review: Mapping[str, Any]) -> tuple[str, list[Table]]:
    par = (f"Change review: {review['reviewed']} of {review['changed']} changed questions "
           f"reviewed: {review['regressions']} regression(s), {review['improvements']} "
           f"improvement(s), {review['neutral']} neutral, {review['unclear']} unclear "
           "(a question is a regression when any annotator's standing decision says so; "
           "`--fail-on regressions` then exits 6).")
    by = review.get("by_annotator", {})
    tables = [Table("Standing decisions by annotator",
                    ("annotator", "reviewed", "regressions", "improvements", "neutral",
                     "unclear"),
                    tuple((a, *(str(c[k]) for k in ("reviewed", "regressions", "improvements",
                                                     "neutral", "unclear")))
                          for a, c in sorted(by.items())))]
    regressions = review.get("regressions_list", [])
    if regressions:
        tables.append(Table("Reviewed regressions", ("question", "annotator", "note"),
                            tuple((r["question_id"], r["annotator"], r["note"] or "-")
                                  for r in regressions)))
    return par, tables


def _human(human: Mapping[str, Any]) -> Table:
    rows = []
    for name, h in sorted(human.get("judges", {}).items()):
        rows.append(_row(name, human.get("primary", "primary"), h["vs_primary"]))
    for b in human.get("between", []):
        rows.append(_row(b["judges"][0], b["judges"][1], b))
    return Table("Human judges (blind pair labels; unsure left out)",
                 ("judge", "against", "pairs", "unsure", "agreement", "Cohen's kappa",
                  "identical partitions", "semantic D (pp), this / other"), tuple(rows))


def _row(name: str, other: str, c: Mapping[str, Any]) -> tuple[str, ...]:
    d = c.get("d_hat") or {}
    if not c.get("pairs"):
        return (name, other, "0", str(c.get("unsure", 0)), "-", "-", "-", "-")
    return (name, other, str(c["pairs"]), str(c["unsure"]),
            f"{num(c['agreement'])} {interval(c['agreement_ci95'])}",
            f"{num(c['kappa'])} {interval(c['kappa_ci95'])}",
            f"{num(c['partitions_identical'])} {interval(c['partitions_identical_ci95'])}",
            f"{num(d.get(name))} / {num(d.get(other))} on {c['d_questions']} questions")


def review_section(review: Mapping[str, Any] | None, human: Mapping[str, Any] | None
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
