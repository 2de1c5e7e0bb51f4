"""``--fail-on regressions``: exit 6 while a reviewed regression stands."""

from __future__ import annotations

from pathlib import Path

import pytest

from snapaudit.run.after.review import ReviewSession
from snapaudit.stats.verdict import EXIT_REGRESSIONS
from tests.helpers.cli import exit_code
from tests.helpers.review import copy_run


def _decide(run: Path, annotator: str, decision: str) -> None:
    with ReviewSession.open(run, annotator) as s:
        item = s.change_items()[0]
        s.save_decision(item.question_id, decision, "", item.shown_sha256)  # type: ignore[arg-type]


def test_report_exits_6_while_a_regression_stands(built_review_run: Path, tmp_path: Path) -> None:
    run = copy_run(built_review_run, tmp_path)
    report = ["report", str(run), "--fail-on", "regressions"]
    assert exit_code(report) == 0  # no review yet
    _decide(run, "alice", "neutral")
    assert exit_code(report) == 0
    _decide(run, "bob", "regression")
    assert EXIT_REGRESSIONS == 6 and exit_code(report) == 6  # any annotator's regression
    assert "Reviewed regressions" in (run / "report.md").read_text()
    assert exit_code(["report", str(run)]) == 0  # only when asked for
    _decide(run, "bob", "improvement")  # revised: the last decision stands
    assert exit_code(report) == 0


def test_run_exits_6_after_re_analysis(built_review_run: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    run = copy_run(built_review_run, tmp_path)
    _decide(run, "alice", "regression")
    argv = ["run", str(built_review_run.parent / "protocol.toml"), "--run-dir", str(run),
            "--progress", "silent"]
    assert exit_code([*argv, "--fail-on", "regressions"]) == 6
    assert "1 regression(s)" in capsys.readouterr().out  # the summary's review line
    assert exit_code([*argv, "--fail-on", "incompatible"]) == 0
    assert exit_code(argv) == 0
