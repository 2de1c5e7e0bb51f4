"""The reviewer's loop in a real headless Chromium, keyboard only (issue 40, item 6): a label
lock and a decision reach results.json and the report without a re-run, the page shows the
lock it has after a reload, the note and the lock have keys, a search's filter clears, and
``snapaudit status`` counts the locked labels as locked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from snapaudit.run.after.status import format_status, run_status
from tests.helpers.cdp import Page
from tests.review.conftest import App, build_run
from tests.review.test_browser import CURRENT, PROGRESS, _label_current, _ready, _wait_saved

pytestmark = [pytest.mark.browser, pytest.mark.slow]

RESULTS = "document.getElementById('results')"
LIST = ("Array.prototype.map.call(document.querySelectorAll('#list button'),"
        "function(b){return b.getAttribute('data-qid');})")
FOCUS = "document.activeElement.id"


def _results(run: Path) -> dict[str, Any]:
    value: dict[str, Any] = json.loads((run / "results.json").read_text(encoding="utf-8"))
    return value


def _updated(page: Page) -> str:
    """Wait until the page says the server brought results.json up to date; its text."""
    text: str = page.wait(f"{RESULTS}.getAttribute('data-state')==='current'&&"
                          f"{RESULTS}.textContent", timeout=60)
    return text


def test_locking_labels_by_key_updates_results_and_report_and_survives_a_reload(
        tmp_path: Path, chromium: str, apps: list[App]) -> None:
    from tests.helpers.cdp import Browser

    run = build_run(tmp_path / "world")
    assert "human" not in (_results(run)["judges"] or {})
    app = App(run, "--label", "--sample", "3", "--annotator", "alice")
    apps.append(app)
    with Browser(chromium, tmp_path / "profile") as browser:
        page = browser.page(app.url)
        _ready(page)
        for n in (1, 2, 3):
            _label_current(page)
            _wait_saved(page, n, 3)
        page.key("L")  # the first press arms the lock, the second locks
        assert "again" in page.eval("document.getElementById('finish').textContent")
        assert "human" not in (_results(run)["judges"] or {})
        page.key("L")
        page.wait(f"{PROGRESS}==='3 / 3 labelled (locked)'")
        assert _updated(page).startswith("results.json and the report updated (")
        human = _results(run)["judges"]["human"]
        assert human["primary"] == "rule" and list(human["judges"]) == ["human:alice"]
        assert human["judges"]["human:alice"]["questions"] == 3
        assert "human:alice" in (run / "report.md").read_text(encoding="utf-8")
        page.reload()
        _ready(page)
        assert page.eval("[document.getElementById('finish').disabled,"
                         "document.getElementById('finish').textContent]") == [
            True, "labels locked"]
        page.keys("LL")  # nothing to lock again: no request, no error
        assert page.eval("document.getElementById('status').className") != "err"
        assert page.errors == []
    status = run_status(run)
    assert "human:alice" in status.locked_verified
    assert "human:alice" not in status.open_verified
    assert "human:alice (" not in format_status(status)  # not "without a lock (N cells)"


def test_a_search_clears_its_filter_and_a_note_and_decision_reach_the_results(
        tmp_path: Path, chromium: str, apps: list[App]) -> None:
    from tests.helpers.cdp import Browser

    run = build_run(tmp_path / "world")
    assert "review" not in _results(run)
    app = App(run, "--annotator", "carol")
    apps.append(app)
    with Browser(chromium, tmp_path / "profile") as browser:
        page = browser.page(app.url)
        _ready(page)
        every = page.eval(LIST)
        assert len(every) == 4  # the planted run's changed questions
        start = page.eval(CURRENT)
        target = every[2]
        page.key("/")
        page.type(f"item {int(target[1:])}")
        assert page.eval(LIST) == [target]  # typing filters the list
        page.key("Enter")  # jumps to the match and clears the filter
        page.wait(f"{CURRENT}==={json.dumps(target)}")
        assert page.eval(LIST) == every and page.eval(FOCUS) != "search"
        assert page.eval("document.getElementById('search').value") == ""
        page.key("j")  # j leaves the match for the next question of the whole list
        assert page.eval(CURRENT) == every[3]
        page.key("k")
        page.wait(f"{CURRENT}==={json.dumps(target)}")
        page.key("/")
        page.type(f"item {int(start[1:])}")
        page.key("Escape")  # back to where the search began, the filter cleared
        page.wait(f"{CURRENT}==={json.dumps(target)}")
        assert page.eval(LIST) == every and page.eval(FOCUS) != "search"
        page.key("r")  # then at once (the save's answer may come while typing: kept)
        page.key("e")  # the note, without tabbing through the page
        assert page.eval(FOCUS) == "note"
        page.type("worse")
        page.key("Enter")
        page.wait("document.querySelector('#item p.saved').textContent.indexOf('worse')>0")
        page.key("Escape")
        assert page.eval(FOCUS) != "note"
        _updated(page)
        page.wait(f"{PROGRESS}==='1 / {len(every)} reviewed'")
        assert page.errors == []
    app.stop()  # closing waits for an update still asked for
    review = _results(run)["review"]
    assert (review["reviewed"], review["regressions"], review["changed"]) == (
        1, 1, len(every))
    assert [(r["question_id"], r["note"]) for r in review["regressions_list"]] == [
        (target, "worse")]
    assert review["decisions"] == 2  # the key, then the note saved with it
    assert "Reviewed regressions" in (run / "report.md").read_text(encoding="utf-8")
