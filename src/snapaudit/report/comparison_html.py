"""The comparison view in HTML: a fixed-layout table a reviewer can work through.

Columns: question | old answers | new answers | verdicts | contribution to D | evidence.
Narrow columns have fixed pixel widths (at least 120 px) and the three text columns share the
rest, so no column is squeezed at 1,280 px and nothing is clipped: long words wrap. Sorting
and filtering are done by the page's one script (allowed by its hash in the CSP).
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from snapaudit.report.comparison import EM_LEGEND
from snapaudit.report.model import AnswerGroup, Comparison, ComparisonRow
from snapaudit.report.untrusted import html as _u

VIEW_CSS = """
#cmp{table-layout:fixed;width:100%;min-width:960px}
#cmp col.q{width:auto}#cmp col.a{width:auto}#cmp col.v{width:170px}#cmp col.c{width:130px}
#cmp col.e{width:190px}
#cmp td,#cmp th{overflow-wrap:anywhere;word-break:break-word}
#cmp th button{font:inherit;font-weight:600;background:none;border:0;padding:0;cursor:pointer;
text-align:left}
#cmp td.c{text-align:right;font-variant-numeric:tabular-nums}
.ans{margin:0 0 2px}.cnt{color:#4a5568;font-size:12px}
.qid{font-family:ui-monospace,monospace;font-size:12px;color:#4a5568}
#cmp-search{width:280px}.tags{margin-top:3px}.filters label{margin-right:14px;white-space:nowrap}
.legend{font-size:12px;color:#4a5568}
"""

VIEW_JS = """
(function(){
  var table=document.getElementById('cmp'); if(!table){return;}
  table.setAttribute('data-ready','1');
  var body=table.tBodies[0]; var search=document.getElementById('cmp-search');
  var boxes=document.querySelectorAll('.filters input[type=checkbox]');
  var count=document.getElementById('cmp-count');
  function apply(){
    var q=(search.value||'').toLowerCase(); var want=[]; var shown=0;
    Array.prototype.forEach.call(boxes,function(b){if(b.checked){want.push(b.value);}});
    Array.prototype.forEach.call(body.rows,function(r){
      var tags=' '+r.getAttribute('data-tags')+' ';
      var ok=r.textContent.toLowerCase().indexOf(q)>=0;
      want.forEach(function(t){if(tags.indexOf(' '+t+' ')<0){ok=false;}});
      r.style.display=ok?'':'none'; if(ok){shown++;}
    });
    count.textContent=String(shown);
  }
  search.addEventListener('input',apply);
  Array.prototype.forEach.call(boxes,function(b){b.addEventListener('change',apply);});
  Array.prototype.forEach.call(table.querySelectorAll('th button[data-key]'),function(btn){
    btn.addEventListener('click',function(){
      var key=btn.getAttribute('data-key');
      var dir=btn.getAttribute('data-dir')==='desc'?1:-1;
      btn.setAttribute('data-dir',dir>0?'asc':'desc');
      var rows=Array.prototype.slice.call(body.rows);
      rows.sort(function(a,b){
        var x=a.getAttribute('data-'+key), y=b.getAttribute('data-'+key);
        if(key==='c'){x=parseFloat(x);y=parseFloat(y);}
        return x<y?-dir:(x>y?dir:0);
      });
      rows.forEach(function(r){body.appendChild(r);});
    });
  });
  apply();
})();
"""


def _e(text: object) -> str:
    return escape(str(text), quote=True)


def _answers(groups: Sequence[AnswerGroup]) -> str:
    out = []
    for g in groups:
        mark = f' <span class="{_e(g.em)}">[{_e(g.em)}]</span>' if g.em else ""
        count = f' <span class="cnt">×{g.count}</span>' if g.count > 1 else ""
        out.append(f'<div class="ans">{_u(g.text)}{mark}{count}</div>')
    return "".join(out)


def _evidence(row: ComparisonRow) -> str:
    parts = []
    for d in row.evidence:
        parts.append(f"<div>{_u(d['from'])}→{_u(d['to'])}: {d['kept']} kept</div>"
                     f"<div>entered: {_u(', '.join(d['entered']) or '-')}</div>"
                     f"<div>left: {_u(', '.join(d['left']) or '-')}</div>"
                     + (f"<div>text changed (same id): {_u(', '.join(d['changed']))}</div>"
                        if d.get("changed") else ""))
    for state, groups in row.others.items():
        parts.append(f"<div><b>{_u(state)}</b>: {_answers(groups)}</div>")
    for state, paths in row.trajectories:  # the agent's steps, old then new
        parts += [f"<div><b>{_u(state)}</b>{f' ×{g.count}' if g.count > 1 else ''}:<ol>"
                  + "".join(f"<li>{_u(step.text())}</li>" for step in g.steps)
                  + "</ol></div>" for g in paths]
    if row.path:
        parts.append(f"<div>path {_u(row.path)}</div>")
    if not parts:
        return "-"
    summary = ("trajectories" if row.trajectories else "documents" if row.evidence
               else "more")
    return f'<details class="ev"><summary>{summary}</summary>{"".join(parts)}</details>'


def _row(row: ComparisonRow, labels: dict[str, str]) -> str:
    tags = "".join(f'<span class="tag">{_e(labels.get(t, t))}</span> ' for t in row.tags)
    plant = f'<span class="tag">plant: {_u(row.plant)}</span>' if row.plant else ""
    cells = (f'<td><div class="qid">{_u(row.id)}</div>{_u(row.question)}'
             f'<div class="tags">{tags}{plant}</div></td>',
             f"<td>{_answers(row.old)}</td>", f"<td>{_answers(row.new)}</td>",
             f"<td>{_e(row.verdicts)}</td>",
             f'<td class="c">{row.contribution_pp:+.2f}</td>', f"<td>{_evidence(row)}</td>")
    cls = ' class="flip"' if "flip" in row.tags else ""
    return (f'<tr{cls} data-tags="{_e(" ".join(row.tags))}" data-c="{row.contribution_pp!r}" '
            f'data-id="{_e(row.id)}">' + "".join(cells) + "</tr>")


def comparison_html(view: Comparison | None) -> str:
    if view is None:
        return ""
    labels = dict(view.filters)
    short = {"flip": "strict flip", "em": "EM transition", "changed": "changed",
             "negative": "negative flip"}
    tag_names = {k: short.get(k, v) for k, v in labels.items()}
    boxes = "".join(f'<label><input type="checkbox" value="{_e(k)}"> {_e(v)}</label>'
                    for k, v in view.filters)
    notes = [f"{len(view.rows)} questions listed (<span id=\"cmp-count\">{len(view.rows)}"
             f"</span> shown); {view.unchanged} with the same normalized answer everywhere "
             "are not listed"]
    if view.truncated:
        notes.append(f"{view.truncated} more changed questions with smaller contributions "
                     "are left out")
    legend = (f"Verdicts and contributions use the {_e(view.kernel)}; contribution "
              "= D_i / n in pp (the column sums to D over all questions). "
              + (_e(EM_LEGEND) if view.gold else "No EM marks: gold is not open.")
              + " ×k: the same answer in k repeats.")
    head = "".join(
        f"<th>{label}</th>" for label in (
            '<button data-key="id">question</button>', f"old: {_e(view.old)}",
            f"new: {_e(view.new)}", "verdicts", '<button data-key="c">contribution to D '
            "(pp)</button>", "evidence diff"))
    cols = ('<colgroup><col class="q"><col class="a"><col class="a"><col class="v">'
            '<col class="c"><col class="e"></colgroup>')
    return (f'<section id="comparison"><h2>Comparison: {_u(view.old)} → {_u(view.new)}</h2>'
            f'<p class="filters"><input id="cmp-search" type="search" '
            f'placeholder="search questions and answers"> {boxes}</p>'
            f'<p class="legend">{legend}</p><p>{"; ".join(notes)}. Click "question" or '
            '"contribution" to sort.</p>'
            f'<table id="cmp">{cols}<thead><tr>{head}</tr></thead><tbody>'
            + "".join(_row(r, tag_names) for r in view.rows) + "</tbody></table></section>")
