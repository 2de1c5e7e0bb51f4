"""The Markdown report: the same content as the HTML page, figures given as their data.

Every string goes through :func:`snapaudit.report.untrusted.md`: text with anything a
CommonMark or GFM renderer could read as markup is put in a code span, so no answer,
question or document id becomes a link, an image or HTML, and control characters are shown.
"""

from __future__ import annotations

from collections.abc import Sequence

from snapaudit.report.attribution import attribution_md
from snapaudit.report.comparison import EM_LEGEND
from snapaudit.report.model import AnswerGroup, Comparison, Report, Section, Table
from snapaudit.report.untrusted import md as _md


def _cell(text: object) -> str:
    return _md(text, table=True)


def table_md(table: Table) -> str:
    lines = [f"**{_md(table.caption)}**", ""] if table.caption else []
    lines.append("| " + " | ".join(_cell(h) for h in table.header) + " |")
    lines.append("|" + "---|" * len(table.header))
    lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in table.rows]
    return "\n".join(lines) + "\n"


def section_md(section: Section) -> str:
    parts = [f"## {_md(section.title)}\n"]
    parts += [f"{_md(p)}\n" for p in section.paragraphs]
    for fig in section.figures:
        parts.append(f"*Figure: {_md(fig.caption)}*\n")
        parts.append(table_md(fig.data))
    parts += [table_md(t) for t in section.tables]
    return "\n".join(parts)


def _groups_md(groups: Sequence[AnswerGroup]) -> str:
    return " / ".join(_md(g.text) + (f" [{g.em}]" if g.em else "")
                      + (f" ×{g.count}" if g.count > 1 else "") for g in groups)


def _comparison_md(view: Comparison | None) -> str:
    if view is None:
        return ""
    lines = [f"## Comparison: {_md(view.old)} → {_md(view.new)}", "",
             f"{len(view.rows)} questions listed, largest contribution to D first; "
             f"{view.unchanged} with the same normalized answer everywhere are not listed"
             + (f"; {view.truncated} more left out" if view.truncated else "") + ". "
             f"Verdicts and contributions use the {_md(view.kernel)}.", ""]
    if view.gold:
        lines += [_md(EM_LEGEND), ""]
    labels = dict(view.filters)
    for row in view.rows:
        tags = ", ".join(labels.get(t, t) for t in row.tags)
        lines.append(f"### {_md(row.id)}: {_md(row.question)}")
        lines.append("")
        lines.append(f"- contribution to D: {row.contribution_pp:+.2f} pp"
                     + (f"; {_md(tags)}" if tags else "")
                     + (f"; plant: {_md(row.plant)}" if row.plant else "")
                     + (f"; path {_md(row.path)}" if row.path else ""))
        lines.append(f"- old {_md(view.old)}: {_groups_md(row.old)}")
        lines.append(f"- new {_md(view.new)}: {_groups_md(row.new)}")
        for state, groups in row.others.items():
            lines.append(f"- {_md(state)}: {_groups_md(groups)}")
        lines.append(f"- verdicts: {_md(row.verdicts)}")
        for d in row.evidence:
            lines.append(f"- evidence {_md(d['from'])}→{_md(d['to'])}: entered "
                         f"{_md(', '.join(d['entered']) or '-')}; left "
                         f"{_md(', '.join(d['left']) or '-')}"
                         + (f"; text changed (same id): {_md(', '.join(d['changed']))}"
                            if d.get("changed") else ""))
        for state, paths in row.trajectories:  # the agent's steps, old then new
            lines += [f"- steps {_md(state)}{f' ×{g.count}' if g.count > 1 else ''}: "
                      + "; ".join(f"{j}. {_md(step.text())}"
                                  for j, step in enumerate(g.steps, start=1))
                      for g in paths]
        lines.append("")
    return "\n".join(lines)


def render_markdown(report: Report) -> str:
    head = f"# {_md(report.title)}\n\n{_md(report.subtitle)}\n\n**{_md(report.verdict)}**\n\n"
    if report.small_sample:
        head += f"**{_md(report.small_sample)}; treat this verdict as provisional.**\n\n"
    return (head + "\n".join(section_md(s) for s in report.sections) + "\n"
            + attribution_md(report.attribution) + _comparison_md(report.comparison))
