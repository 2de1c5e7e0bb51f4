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

from snapaudit.report.model import Figure, Report, Section, Table
from snapaudit.report.untrusted import html as _u

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1180px;padding:16px 24px;
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
#drill th{cursor:pointer;user-select:none}
.M{color:#276749;font-weight:600}.N{color:#9b2c2c}
.flip{background:#fffaf0}.tag{font-size:11px;background:#e2e8f0;border-radius:3px;padding:0 4px}
.ev{font-size:12px;color:#4a5568}
"""

_JS = """
(function(){
  var table=document.getElementById('drill'); if(!table){return;}
  table.setAttribute('data-ready','1');
  var body=table.tBodies[0]; var filter=document.getElementById('drill-filter');
  var only=document.getElementById('drill-flips');
  function apply(){
    var q=(filter.value||'').toLowerCase();
    Array.prototype.forEach.call(body.rows,function(r){
      var ok=r.textContent.toLowerCase().indexOf(q)>=0;
      if(only.checked&&r.getAttribute('data-flip')!=='1'){ok=false;}
      r.style.display=ok?'':'none';
    });
  }
  filter.addEventListener('input',apply); only.addEventListener('change',apply);
  Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
    th.addEventListener('click',function(){
      var rows=Array.prototype.slice.call(body.rows);
      var dir=th.getAttribute('data-dir')==='asc'?-1:1;
      th.setAttribute('data-dir',dir>0?'asc':'desc');
      rows.sort(function(a,b){
        var x=a.cells[i].textContent, y=b.cells[i].textContent;
        return x<y?-dir:(x>y?dir:0);
      });
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
})();
"""


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


def _answers_cell(answers: list[list[str]]) -> str:
    out = []
    for text, mark in answers:
        badge = f' <span class="{_e(mark)}">[{_u(mark)}]</span>' if mark else ""
        out.append(f"{_u(text)}{badge}")
    return "<br>".join(out)


def _evidence(diffs: list[dict[str, Any]]) -> str:
    lines = [f"{_u(d['from'])}→{_u(d['to'])}: +{_u(', '.join(d['entered']) or '-')} "
             f"−{_u(', '.join(d['left']) or '-')}" for d in diffs]
    return '<div class="ev">' + "<br>".join(lines) + "</div>"


def drilldown_html(report: Report) -> str:
    states = report.states
    head = "".join(f"<th>{_u(h)}</th>" for h in
                   ("id", "question", "flip", "plant", "path", *states, "judged different",
                    "evidence diff (+entered −left)"))
    rows = []
    for row in report.drilldown:
        cells = [_u(row["id"]), _u(row["question"]), "yes" if row["flip"] else "",
                 _u(row["plant"]), _u(row["path"])]
        cells += [_answers_cell(row["answers"].get(s, [])) for s in states]
        cells += ["<br>".join(_u(x) for x in row["different"]), _evidence(row["evidence"])]
        cls = ' class="flip"' if row["flip"] else ""
        rows.append(f'<tr data-flip="{1 if row["flip"] else 0}"{cls}>'
                    + "".join(f"<td>{c}</td>" for c in cells) + "</tr>")
    controls = ('<p><input id="drill-filter" type="search" placeholder="filter questions">'
                ' <label><input id="drill-flips" type="checkbox"> strict flips only</label>'
                f" — {len(report.drilldown)} changed questions; click a header to sort.</p>")
    return (f"<section><h2>Changed questions</h2>{controls}<table id=\"drill\"><thead><tr>"
            f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table></section>")


def render_html(report: Report) -> str:
    """The whole page as one string."""
    cls = {True: "good", False: "bad", None: "none"}[report.verdict_ok]
    data = script_json({"drilldown": list(report.drilldown)})
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
        f"style-src 'unsafe-inline'; script-src '{_JS_HASH}'; img-src data:\">"
        f"<title>{_e(report.title)} {_e(report.subtitle)}</title><style>{_CSS}</style></head>"
        f"<body><h1>{_u(report.title)}</h1><p>{_u(report.subtitle)}</p>"
        f"<div class=\"verdict {cls}\">{_u(report.verdict)}</div>"
        + "".join(section_html(s) for s in report.sections)
        + drilldown_html(report)
        + f"<script type=\"application/json\" id=\"report-data\">{data}</script>"
        + f"<script>{_JS}</script></body></html>\n"
    )
