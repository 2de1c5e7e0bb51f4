"""``snapaudit report DIR``: read a finished run and write report.html and report.md."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snapaudit import atomic
from snapaudit.report.content import build_report
from snapaudit.report.html import render_html
from snapaudit.report.load import RunView, load_run
from snapaudit.report.markdown import render_markdown
from snapaudit.report.model import Report
from snapaudit.report.top_changes import change_lines
from snapaudit.results import ReviewSummary
from snapaudit.run.record.rundir import RunDir
from snapaudit.stats.plants import score_plants


@dataclass(frozen=True)
class ReportPaths:
    html: Path
    markdown: Path
    report: Report
    review: ReviewSummary | None = None  # the change review as it stands (snapaudit review)
    changes: tuple[str, ...] = ()  # the questions that changed most, for the terminal


def plant_score(view: RunView) -> dict[str, Any] | None:
    """Planted-flip recall and precision when the run is the demo world."""
    if view.plants is None:
        return None
    return score_plants(view.plants, list(view.results.flips.question_ids)).to_json()


def make_report(view: RunView) -> Report:
    return build_report(view, plant_score(view))


def write_report(run_dir: str | Path, out_dir: str | Path | None = None) -> ReportPaths:
    """Write ``report.html`` and ``report.md`` (into ``out_dir``, default the run directory)."""
    view = load_run(run_dir)
    report = make_report(view)
    out = Path(out_dir) if out_dir is not None else Path(run_dir)
    out.mkdir(parents=True, exist_ok=True)
    html_path, md_path = out / RunDir(out).report_html.name, out / RunDir(out).report_md.name
    atomic.write_text(html_path, render_html(report), newline="\n")  # a kill: old or new
    atomic.write_text(md_path, render_markdown(report), newline="\n")
    changes = change_lines(view.results, view.answers, view.labels)
    return ReportPaths(html_path, md_path, report, view.review, tuple(changes))
