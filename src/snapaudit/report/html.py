"""The self-contained HTML report: inline CSS, inline SVG, a little inline JS, no network.

Every string shown as element content goes through :func:`snapaudit.report.untrusted.html`
(escaped, control and bidi characters shown, isolated in ``<bdi>``); attributes and the
title through :func:`html.escape`; JSON embedded in a ``<script>`` has ``<``, ``>``, ``&``
and the two JavaScript line separators escaped, so no value can close the script or open a
comment.
"""

from __future__ import annotations

import base64
import hashlib
import json
from html import escape
from typing import Any

from snapaudit.report.attribution import attribution_html
from snapaudit.report.comparison_html import VIEW_CSS, VIEW_JS, comparison_html
from snapaudit.report.model import Figure, Report, Section, Table
from snapaudit.report.untrusted import html as _u

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1640px;padding:16px 24px;
color:#1a202c}
h1{margin:.2em 0}h2{border-bottom:2px solid #e2e8f0;padding-bottom:4px;margin-top:1.6em}
.verdict{padding:10px 14px;border-radius:6px;font-weight:600;font-size:16px}
.bad{background:#fed7d7;color:#822727}.good{background:#c6f6d5;color:#22543d}
.none{background:#edf2f7}
table{border-collapse:collapse;margin:8px 0 16px;font-size:13px}
th,td{border:1px solid #cbd5e0;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#edf2f7}caption{text-align:left;font-weight:600;padding:4px 0}
figure{display:inline-block;margin:8px 16px 16px 0;vertical-align:top}
figcaption{font-size:12px;color:#4a5568;max-width:560px}
details.data{font-size:12px}
.M{color:#276749;font-weight:600}.C{color:#276749}.N{color:#9b2c2c}
.flip{background:#fffaf0}.tag{font-size:11px;background:#e2e8f0;border-radius:3px;padding:0 4px}
.ev{font-size:12px;color:#4a5568}.warn{background:#fefcbf;color:#744210;padding:6px 14px;
border-radius:6px;margin-top:6px}
td,th,figcaption,p{overflow-wrap:anywhere}
""" + VIEW_CSS

_JS = VIEW_JS


_JS_HASH = "sha256-" + base64.b64encode(hashlib.sha256(_JS.encode()).digest()).decode()


def script_json(value: Any) -> str:
    """JSON safe to embed inside ``<script>``: cannot close the element or open a comment."""
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    for raw, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                     ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, esc)
    return text


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def table_html(table: Table) -> str:
    cap = f"<caption>{_u(table.caption)}</caption>" if table.caption else ""
    head = "".join(f"<th>{_u(h)}</th>" for h in table.header)
    rows = "".join("<tr>" + "".join(f"<td>{_u(c)}</td>" for c in row) + "</tr>"
                   for row in table.rows)
    return f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"


def figure_html(fig: Figure) -> str:
    # fig.svg is built by report.figures, which escapes every label it draws.
    return (f"<figure>{fig.svg}<figcaption>{_u(fig.caption)}</figcaption>"
            f"<details class=\"data\"><summary>data</summary>{table_html(fig.data)}</details>"
            "</figure>")


def section_html(section: Section) -> str:
    parts = [f"<h2>{_u(section.title)}</h2>"]
    parts += [f"<p>{_u(p)}</p>" for p in section.paragraphs]
    parts += [figure_html(f) for f in section.figures]
    parts += [table_html(t) for t in section.tables]
    return "<section>" + "".join(parts) + "</section>"


def render_html(report: Report) -> str:
    """The whole page as one string."""
    cls = {True: "good", False: "bad", None: "none"}[report.verdict_ok]
    rows = [r.to_json() for r in report.comparison.rows] if report.comparison else []
    data = script_json({"comparison": rows})
    warn = (f'<div class="warn">{_u(report.small_sample)}; treat this verdict as '
            "provisional</div>" if report.small_sample else "")
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        f"style-src 'unsafe-inline'; script-src '{_JS_HASH}'; img-src data:\">"
        f"<title>{_e(report.title)} {_e(report.subtitle)}</title><style>{_CSS}</style></head>"
        f"<body><h1>{_u(report.title)}</h1><p>{_u(report.subtitle)}</p>"
        f"<div class=\"verdict {cls}\">{_u(report.verdict)}</div>{warn}"
        + "".join(section_html(s) for s in report.sections)
        + attribution_html(report.attribution)
        + comparison_html(report.comparison)
        + f"<script type=\"application/json\" id=\"report-data\">{data}</script>"
        + f"<script>{_JS}</script></body></html>\n"
    )
