"""The report's "People in the loop" section: the change review and the human judges."""

from __future__ import annotations

from pathlib import Path

from snapaudit.progress import SilentProgress
from snapaudit.report.build import write_report
from snapaudit.run.after.review import ReviewSession
from snapaudit.run.engine import reanalyze
from tests.helpers.review import build_review_run

HOSTILE = "<script>alert(1)</script> \u202eevil"


def test_the_section_shows_decisions_and_human_judges(tmp_path: Path) -> None:
    run = build_review_run(tmp_path)
    assert "People in the loop" not in write_report(run).markdown.read_text()
    with ReviewSession.open(run, "alice", sample=3) as s:
        for item in s.label_items():
            s.save_labels(item.question_id, dict.fromkeys(item.pairs, "same"))
        s.finish_labels()
        c = s.change_items()[0]
        s.save_decision(c.question_id, "regression", HOSTILE, c.shown_sha256)
    paths = write_report(run)  # the decision shows at once, before any re-analysis
    md = paths.markdown.read_text()
    assert "Change review: 1 of" in md and "1 regression(s)" in md
    assert c.question_id in md and "Human judges" not in md
    reanalyze(run, SilentProgress())
    paths = write_report(run)
    md, html = paths.markdown.read_text(), paths.html.read_text()
    assert "Human judges (blind pair labels" in md and "human:alice" in md
    assert "<script>alert(1)" not in html and "&lt;script&gt;alert(1)" in html
    assert paths.review is not None and paths.review.regressions == 1
