"""The Markdown report: the same content as the HTML page, figures given as their data.

Every string goes through :func:`snapaudit.report.untrusted.md`: text with anything a
CommonMark or GFM renderer could read as markup is put in a code span, so no answer,
question or document id becomes a link, an image or HTML, and control characters are shown.
"""

from __future__ import annotations

from snapaudit.report.model import Report, Section, Table
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


def _drilldown_md(report: Report) -> str:
    lines = ["## Changed questions", "", f"{len(report.drilldown)} changed questions.", ""]
    for row in report.drilldown:
        flip = " — strict flip" if row["flip"] else ""
        plant = f" — plant: {_md(row['plant'])}" if row["plant"] else ""
        lines.append(f"### {_md(row['id'])}: {_md(row['question'])}{flip}{plant}")
        lines.append("")
        lines.append(f"Path {_md(row['path'])}.")
        lines.append("")
        for state, answers in row["answers"].items():
            shown = " / ".join(_md(a) + (f" [{m}]" if m else "") for a, m in answers)
            lines.append(f"- {_md(state)}: {shown}")
        if row["different"]:
            lines.append(f"- judged different: {_md(', '.join(row['different']))}")
        for d in row["evidence"]:
            lines.append(f"- evidence {_md(d['from'])}→{_md(d['to'])}: entered "
                         f"{_md(', '.join(d['entered']) or '-')}; left "
                         f"{_md(', '.join(d['left']) or '-')}")
        lines.append("")
    return "\n".join(lines)


def render_markdown(report: Report) -> str:
    head = f"# {_md(report.title)}\n\n{_md(report.subtitle)}\n\n**{_md(report.verdict)}**\n\n"
    return head + "\n".join(section_md(s) for s in report.sections) + "\n" + _drilldown_md(report)
