"""Service text in the report stays text: no Markdown link, image or HTML comes from it
(rendered with a CommonMark parser), and no bidi control reorders report.html (in a real
headless Chromium: the EM mark after a hostile answer stays after it)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from snapaudit.report.build import write_report
from snapaudit.report.untrusted import html, md, shown
from snapaudit.tables import read_answers, write_answers
from tests.report.conftest import make_run

RLO = "\u202e"
MARKDOWN = (
    "[click](javascript:alert(1))", "![beacon](http://evil.example/b.png)",
    "<http://evil.example/x>", "<img src=http://evil.example/i.png>",
    "[ref]\n\n[ref]: http://evil.example/r", "&#91;e&#93;(http://evil.example/e)",
    "a | b ` c `` d", "# heading", "1. item", "www.evil.example/w",
)


def _hostile_run(root: Path) -> Path:
    """The simulated report run with Markdown and bidi payloads in answers, questions and
    document ids of q001 and q002 (both changed questions, with EM marks)."""
    run = make_run(root)
    path = run / "tables" / "answers.jsonl"
    rows = read_answers(path)
    out = []
    for i, r in enumerate(rows):
        if r.question_id in ("q001", "q002"):
            payload = MARKDOWN[i % len(MARKDOWN)]
            docs = (f"{RLO}doc-{i}", *(r.doc_ids or ())[1:]) if r.doc_ids else (f"{RLO}d",)
            answer = f"{RLO}{payload} {i}" if r.state == "n7" else r.answer
            r = dataclasses.replace(r, answer=answer, doc_ids=docs,
                                    question=f"{r.question} {' '.join(MARKDOWN)} {RLO}")
        out.append(r)
    write_answers(path, out)
    return run


def _tokens(text: str) -> list[str]:
    parser = MarkdownIt("commonmark").enable("table").enable("strikethrough")
    names: list[str] = []
    for tok in parser.parse(text):
        names.append(tok.type)
        names += [child.type for child in tok.children or []]
    return names


def test_markdown_report_has_no_links_images_or_html_from_service_text(
        tmp_path: Path) -> None:
    text = write_report(_hostile_run(tmp_path / "run")).markdown.read_text()
    assert "evil.example" in text and "javascript:" in text  # shown, as text
    kinds = set(_tokens(text))
    assert not kinds & {"link_open", "image", "html_inline", "html_block"}, kinds
    assert RLO not in text and "\\u202e" in text


def test_md_and_html_helpers_by_hand() -> None:
    assert md("plain answer") == "plain answer"
    assert md("[x](y)") == "` [x](y) `"
    assert md("a`b``c", table=True) == "``` a`b``c ```"
    assert md("a|b", table=True) == "` a\\|b `"
    assert md(f"{RLO}x\ny") == "` \\u202ex y `"
    assert html(f"<b>{RLO}&") == "<bdi>&lt;b&gt;\\u202e&amp;</bdi>"
    assert shown("tab\tnew\nline\u200b\x1b") == "tab\tnew\nline\\u200b\\x1b"


FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--allow-file-access-from-files"]

# Loads the report in a frame and measures, for every EM mark of the comparison view, whether the
# last line of the text before it ends left of the mark on the same line (as left-to-right
# text does), and counts U+202E in the rendered text. Written to the title.
HARNESS = """<!DOCTYPE html><html><head><meta charset="utf-8"><title>pending</title></head>
<body><iframe id="f" src="REPORT" style="width:1400px;height:3000px"></iframe><script>
document.getElementById('f').addEventListener('load', function () {
  var d = this.contentDocument, out = {marks: 0, spilled: 0, rlo: 0, bdi: 0};
  d.querySelectorAll('#cmp span.M, #cmp span.N').forEach(function (mark) {
    var before = mark.previousSibling;
    if (before && before.nodeType === 3 && !before.textContent.trim()) {
      before = before.previousSibling;
    }
    if (!before) { return; }
    var r = d.createRange(); r.selectNode(before);
    var lines = r.getClientRects(), last = lines[lines.length - 1];
    var m = mark.getBoundingClientRect();
    out.marks += 1;
    if (Math.abs(last.top - m.top) < 4 && last.right > m.left + 1) { out.spilled += 1; }
  });
  out.rlo = d.body.innerText.split('\\u202e').length - 1;
  out.bdi = d.querySelectorAll('#cmp bdi').length;
  document.title = 'RESULT' + JSON.stringify(out);
});
</script></body></html>"""


@pytest.mark.browser
def test_bidi_controls_do_not_reorder_the_page(tmp_path: Path, chromium: str) -> None:
    report = write_report(_hostile_run(tmp_path / "run")).html
    harness = tmp_path / "harness.html"
    harness.write_text(HARNESS.replace("REPORT", report.as_uri()), encoding="utf-8")
    done = subprocess.run([chromium, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}",
                           "--virtual-time-budget=3000", "--dump-dom", harness.as_uri()],
                          capture_output=True, text=True, timeout=120, check=True)
    start = done.stdout.index("RESULT") + len("RESULT")
    result = json.loads(done.stdout[start:done.stdout.index("</title>")])
    assert result["marks"] >= 4  # the hostile answers of q001/q002 in n7 carry EM marks
    assert result["spilled"] == 0, result
    assert result["rlo"] == 0 and result["bdi"] > 0, result
