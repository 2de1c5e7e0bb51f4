"""The review keeps results.json and the report current (snapaudit.review.refresh): requests
coalesce on one worker, a busy run directory is waited for, a failure is one line, and a real
run's decision and label lock reach results.json through the app's API (no `snapaudit run`)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from snapaudit.errors import BusyError, ConfigError
from snapaudit.review.refresh import ResultsUpdater, update_results
from snapaudit.run.after.review import ReviewSession
from snapaudit.run.after.status import run_status
from tests.helpers.review import copy_run
from tests.review.conftest import App, post, raw


class Recorder:
    """An update that records its calls; ``gate`` holds a call until it is set."""

    def __init__(self, fail: list[Exception] | None = None) -> None:
        self.calls = 0
        self.fail = list(fail or [])
        self.gate = threading.Event()
        self.gate.set()
        self.started = threading.Event()

    def __call__(self, run_dir: Path) -> None:
        self.calls += 1
        self.started.set()
        self.gate.wait(10)
        if self.fail:
            raise self.fail.pop(0)


def test_requests_made_during_an_update_are_served_by_one_more() -> None:
    update = Recorder()
    update.gate.clear()
    updater = ResultsUpdater(Path("run"), update)
    assert updater.state() == {"state": "current", "error": None, "updated_at": None}
    updater.request()
    assert update.started.wait(10)
    for _ in range(5):  # while the first runs
        updater.request()
    assert updater.state()["state"] == "updating"
    update.gate.set()
    assert updater.wait(10)
    updater.close()
    assert update.calls == 2  # the first, then one for the five
    state = updater.state()
    assert state["state"] == "current" and state["updated_at"] is not None


def test_a_busy_run_directory_is_waited_for_then_a_failure_is_one_line() -> None:
    update = Recorder([BusyError("DIR is held by snapaudit run (pid 1)"),
                       BusyError("DIR is held by snapaudit run (pid 1)")])
    updater = ResultsUpdater(Path("run"), update)
    updater.request()
    assert updater.wait(30)
    assert update.calls == 3 and updater.state()["state"] == "current"
    update.fail = [ConfigError("the run has no results.json yet")]
    updater.request()
    assert updater.wait(10)
    assert updater.state() == {"state": "failed", "error": "the run has no results.json yet",
                               "updated_at": updater.state()["updated_at"]}
    update.fail = [ValueError("a bug")]
    updater.request()
    assert updater.wait(10)
    assert updater.state()["error"] == "internal error: ValueError: a bug"
    updater.request()  # the next request tries again
    assert updater.wait(10) and updater.state()["state"] == "current"
    updater.close()


def test_close_serves_what_was_asked_and_stops_waiting_on_a_busy_folder() -> None:
    update = Recorder([BusyError("busy")] * 8)
    updater = ResultsUpdater(Path("run"), update)
    updater.request()
    assert update.started.wait(10)
    updater.close()  # the first wait (0.5 s) is cut short: the folder stays busy
    assert update.calls == 1 and updater.state()["error"] == "busy"


def test_an_unfinished_run_is_not_completed_by_the_review(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    with pytest.raises(ConfigError, match=r"no results\.json yet"):
        update_results(tmp_path / "run")


@pytest.mark.slow
def test_a_decision_and_a_label_lock_reach_results_through_the_api(
        built_review_run: Path, tmp_path: Path, apps: list[App]) -> None:
    run = copy_run(built_review_run, tmp_path)
    before = json.loads((run / "results.json").read_text())
    change = App(run, "--annotator", "alice")
    apps.append(change)
    item = raw(change, "GET", "/api/items")[2]["items"][0]
    status, _, value = post(change, "/api/decisions", {
        "question_id": item["question_id"], "decision": "regression", "note": "worse",
        "shown_sha256": item["shown_sha256"]})
    assert status == 200 and value["progress"]["results"]["state"] == "updating"
    assert change.stop()[0] == 0  # Ctrl-C: the update asked for is finished first
    after = json.loads((run / "results.json").read_text())
    assert after["review"]["regressions_list"][0]["note"] == "worse"
    assert {k: v for k, v in after.items() if k != "review"} == before  # nothing else moved
    assert "Reviewed regressions" in (run / "report.md").read_text()
    with ReviewSession.open(run, "bob", sample=2) as s:
        for it in s.label_items():
            s.save_labels(it.question_id, dict.fromkeys(it.pairs, "same"))
    assert "human:bob" in run_status(run).open_verified  # saved, not yet locked
    label = App(run, "--label", "--sample", "2", "--annotator", "bob")
    apps.append(label)
    assert post(label, "/api/finish", {})[0] == 200
    label.stop()
    judges = json.loads((run / "results.json").read_text())["judges"]["human"]["judges"]
    assert judges["human:bob"]["questions"] == 2
    status_after = run_status(run)
    assert "human:bob" in status_after.locked_verified
    assert "human:bob" not in status_after.open_verified
