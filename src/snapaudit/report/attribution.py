"""The attribution view: for each attributed question, the documents its verdict names.

Read from the ``attribution`` section of results.json (``snapaudit attribute``) and, for the
documents' URLs and rendered text, the run's locked evidence (pass 1 of the retrieval stage).
Each named document is shown with its id, its URL, its rank in the new evidence ("in"), the
leaving document the necessity check put in its place and that document's rank in the old
evidence ("out"), and its rendered block on demand (a ``<details>`` element in report.html),
beside the question's old and new answers. Every string is untrusted text
(:mod:`snapaudit.report.untrusted`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from snapaudit.report.load import RunView
from snapaudit.report.untrusted import html as _u
from snapaudit.report.untrusted import md as _md
from snapaudit.systems.base import Evidence


@dataclass(frozen=True)
class AttributedDocument:
    doc_id: str
    url: str
    rank_in: int  # rank in the new evidence
    out_doc: str | None  # the leaving document that replaced it in the necessity check
    out_rank: int | None  # that document's rank in the old evidence
    text: str  # its rendered block ("" when the evidence is not in the run)


@dataclass(frozen=True)
class AttributedQuestion:
    question_id: str
    question: str
    verdict: str
    agreement: str
    old_answers: tuple[str, ...]
    new_answers: tuple[str, ...]
    documents: tuple[AttributedDocument, ...]


def _evidence(view: RunView) -> dict[tuple[str, str], Evidence | None]:
    from snapaudit.run.record.rundir import RunDir
    from snapaudit.run.stages.retrieval import locked_evidence

    rd = RunDir(view.run_dir, read_only=True)
    if not rd.has_ledger():
        return {}
    with rd:
        return locked_evidence(rd.ledger())


def _blocks(ev: Evidence | None) -> dict[str, str]:
    from snapaudit.testbed.render import split_blocks

    if ev is None:
        return {}
    try:
        return split_blocks(ev.rendered, ev.doc_ids)
    except ValueError:  # evidence of a system that renders otherwise
        return {}


def _url(block: str) -> str:
    line = next((x for x in block.splitlines() if x.startswith("url: ")), "")
    return line.removeprefix("url: ")


def attribution_view(view: RunView) -> tuple[AttributedQuestion, ...]:
    """The attributed questions in the section's order (empty without a section)."""
    section = view.record.attribution
    if section is None:
        return ()
    old, new = view.results.comparison.old, view.results.comparison.new
    evidence = _evidence(view)
    answers: dict[tuple[str, str], list[str]] = {}
    text: dict[str, str] = {}
    for a in sorted(view.answers, key=lambda a: a.repeat):
        answers.setdefault((a.question_id, a.state), []).append(a.answer)
        text.setdefault(a.question_id, a.question or "")
    out = []
    for row in section.questions:
        qid = row.question_id
        blocks = {**_blocks(evidence.get((qid, old))), **_blocks(evidence.get((qid, new)))}
        gone = row.leaving
        ranks = {d.doc_id: d.rank for d in row.documents}
        docs = []
        for doc in row.named:
            out_doc = gone[0] if gone and doc in row.entering else None
            docs.append(AttributedDocument(
                doc, _url(blocks.get(doc, "")), ranks.get(doc, 0), out_doc,
                row.old.index(out_doc) + 1 if out_doc in row.old else None,
                blocks.get(doc, "")))
        out.append(AttributedQuestion(
            qid, text.get(qid, ""), row.verdict,
            "-" if row.agreement is None else f"{row.agreement:.2f}",
            tuple(answers.get((qid, old), [])), tuple(answers.get((qid, new), [])),
            tuple(docs)))
    return tuple(out)


TITLE = "Why did the answer change? Counterfactual evidence attribution"
LEGEND = ("Each flagged question's answers were regenerated with one entering document "
          "swapped into the old evidence (sufficiency) and out of the new (necessity); "
          "'caused': both moved the answer. in: the document's rank in the new evidence; "
          "out: the leaving document that took its place, with its rank in the old evidence.")


def _doc_html(d: AttributedDocument) -> str:
    out = f"{_u(d.out_doc)} (rank {d.out_rank})" if d.out_doc else "removed"
    body = (f"<details><summary>rendered text</summary><pre>{_u(d.text)}</pre></details>"
            if d.text else "")
    return (f"<div class=\"ev\"><b>{_u(d.doc_id)}</b> {_u(d.url)}<br>in: rank {d.rank_in}; "
            f"out: {out}{body}</div>")


def attribution_html(rows: Sequence[AttributedQuestion]) -> str:
    if not rows:
        return ""
    head = "".join(f"<th>{h}</th>" for h in ("question", "verdict (agreement)", "documents",
                                              "old answers", "new answers"))
    body = "".join(
        f"<tr><td>{_u(q.question_id)}: {_u(q.question)}</td>"
        f"<td>{_u(q.verdict)} ({_u(q.agreement)})</td>"
        f"<td>{''.join(_doc_html(d) for d in q.documents) or '-'}</td>"
        f"<td>{' / '.join(_u(a) for a in q.old_answers)}</td>"
        f"<td>{' / '.join(_u(a) for a in q.new_answers)}</td></tr>" for q in rows)
    return (f"<section id=\"attribution\"><h2>{_u(TITLE)}</h2><p>{_u(LEGEND)}</p>"
            f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></section>")


def attribution_md(rows: Sequence[AttributedQuestion]) -> str:
    if not rows:
        return ""
    lines = [f"## {_md(TITLE)}", "", _md(LEGEND), ""]
    for q in rows:
        lines.append(f"### {_md(q.question_id)}: {_md(q.question)}")
        lines.append("")
        lines.append(f"- verdict: {_md(q.verdict)} (agreement {q.agreement})")
        lines.append(f"- old answers: {' / '.join(_md(a) for a in q.old_answers)}")
        lines.append(f"- new answers: {' / '.join(_md(a) for a in q.new_answers)}")
        for d in q.documents:
            out = f"{_md(d.out_doc)} (rank {d.out_rank})" if d.out_doc else "removed"
            lines.append(f"- document {_md(d.doc_id)} {_md(d.url)}: in rank {d.rank_in}; "
                         f"out: {out}; text (report.html)")
        lines.append("")
    return "\n".join(lines)
