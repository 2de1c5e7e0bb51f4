"""Python systems in a run: a sync target is never called more often at once than its slots
(an abandoned call keeps its slot, a retry waits for its cell's abandoned attempt), a hanging
call stops the stage with the fix, and in worker processes a native crash is one failed
attempt and a hanging call is killed at its timeout."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

import snapaudit
from snapaudit.errors import BackendError, RetriesExhaustedError
from tests.fakes.python_isolation import overlaps, spans
from tests.helpers.cli import snapaudit as snapaudit_cli
from tests.helpers.ledger_view import accepted, query
from tests.helpers.protocol import python_protocol_text, save_protocol, write_world

FAKES = "tests.fakes.python_isolation"


def _protocol(tmp: Path, target: str, kwargs: dict[str, Any], settings: str = "",
              **run: Any) -> Path:
    write_world(tmp, n=6)
    kw = "{ " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in kwargs.items()) + " }"
    body = f'target = "{FAKES}:{target}"\nkwargs = {kw}\n{settings}'
    return save_protocol(tmp, python_protocol_text(body, run={"concurrency": 4, **run}))


def _failed(run_dir: Path) -> list[tuple[str, str, str]]:
    return query(run_dir / "ledger.sqlite", "SELECT cell_key, reason, error FROM attempts "
                 "WHERE stage='answer' AND outcome='transport_invalid' ORDER BY id")


@pytest.mark.parametrize(("settings", "overlapping"), [("", False), ("thread_safe = true", True)])
def test_a_sync_target_runs_one_call_at_a_time_unless_thread_safe(
        tmp_path: Path, settings: str, overlapping: bool) -> None:
    log = tmp_path / "calls.jsonl"
    proto = _protocol(tmp_path, "logged_sleep", {"log": str(log), "sleep_s": 0.05}, settings)
    snapaudit.audit(proto, tmp_path / "run")
    assert len(accepted(tmp_path / "run" / "ledger.sqlite")) == 24
    # [run] concurrency = 4; both states call the same function: its slot is shared
    assert (overlaps(spans(log)) > 0) is overlapping
    for state in ("old", "new"):  # thread_safe: each state has its own slots
        calls = [c for c in spans(log) if c["state"] == state]
        assert len(calls) == 12
        assert (overlaps(calls) > 0) is overlapping


@pytest.mark.slow
def test_an_abandoned_call_keeps_its_slot_and_its_retry_waits_for_it(tmp_path: Path) -> None:
    # q000|old|1's first attempt sleeps 1.5 s under timeout_s = 1: abandoned at 1 s
    log = tmp_path / "calls.jsonl"
    proto = _protocol(tmp_path, "logged_sleep",
                      {"log": str(log), "sleep_s": 0.05, "slow_s": 1.5}, timeout_s=1.0)
    snapaudit.audit(proto, tmp_path / "run")
    assert len(accepted(tmp_path / "run" / "ledger.sqlite")) == 24
    failed = _failed(tmp_path / "run")
    assert sorted((k, r) for k, r, _ in failed) == [("q000|new|1", "timeout"),
                                                      ("q000|old|1", "timeout")]
    for _, _, error in failed:
        assert ("1 abandoned call(s) of states old, new (one target: their slots are shared) "
                "still running, 1 slot(s)") in error
    assert overlaps(spans(log)) == 0  # the model is never called twice at once, any state
    for state in ("old", "new"):
        calls = [c for c in spans(log) if c["state"] == state]
        first, retry = (c for c in calls if c["qid"] == "q000" and c["repeat"] == 1)
        assert (first["attempt"], retry["attempt"]) == (1, 2)
        assert retry["start"] >= first["end"]  # the retry began after the first returned


@pytest.mark.slow
def test_every_slot_held_by_a_hanging_call_stops_the_stage_with_the_fix(
        tmp_path: Path) -> None:
    proto = _protocol(tmp_path, "hang_first", {"hang_s": 15.0}, timeout_s=0.5)
    start = time.monotonic()
    with pytest.raises(BackendError, match="held by a call abandoned") as info:
        snapaudit.audit(proto, tmp_path / "run")
    assert 'isolation = "process"' in str(info.value) and "timeout_s" in str(info.value)
    assert time.monotonic() - start < 12  # it did not wait for the hanging calls


@pytest.mark.slow
def test_the_cli_exits_at_once_when_every_slot_hangs(tmp_path: Path) -> None:
    proto = _protocol(tmp_path, "hang_first", {"hang_s": 60.0}, timeout_s=0.5)
    start = time.monotonic()
    out = snapaudit_cli("run", str(proto), "--run-dir", "run", "--progress", "silent",
                        cwd=tmp_path)
    assert out.returncode == 2, out.stderr
    assert "held by a call abandoned" in out.stderr and "Traceback" not in out.stderr
    assert time.monotonic() - start < 30  # the hanging thread does not hold the exit


@pytest.mark.slow
def test_a_native_crash_in_a_worker_is_one_failed_attempt(tmp_path: Path) -> None:
    marker = tmp_path / "aborted"
    proto = _protocol(tmp_path, "abort_once", {"marker": str(marker)}, 'isolation = "process"')
    result = snapaudit.audit(proto, tmp_path / "run")
    assert marker.exists()
    assert len(accepted(tmp_path / "run" / "ledger.sqlite")) == 24  # the run went on
    failed = _failed(tmp_path / "run")
    assert len(failed) == 1
    key, reason, error = failed[0]
    assert key.startswith("q001|") and reason == "worker_died"
    assert "worker died: SIGABRT (signal 6)" in error and "replaced" in error
    assert result.kernels["exact"].d_hat == pytest.approx(0.0)


@pytest.mark.slow
def test_a_hanging_call_in_a_worker_is_killed_at_its_timeout(tmp_path: Path) -> None:
    proto = _protocol(tmp_path, "hang_first", {"hang_s": 60.0}, 'isolation = "process"',
                      timeout_s=1.0)
    start = time.monotonic()
    snapaudit.audit(proto, tmp_path / "run")
    assert time.monotonic() - start < 50  # not the 60 s one call would hang (4 x 60 s)
    assert len(accepted(tmp_path / "run" / "ledger.sqlite")) == 24
    failed = _failed(tmp_path / "run")
    assert sorted(k for k, _, _ in failed) == sorted(
        f"q000|{s}|{r}" for s in ("old", "new") for r in (1, 2))
    assert all(r == "timeout" and "was killed and is replaced" in e for _, r, e in failed)


def test_the_hint_after_timeouts_says_what_to_change() -> None:
    only = str(RetriesExhaustedError("answer", ["q000|old|1"], {"timeout": 4}))
    assert "re-run the same command" not in only
    assert "raise [run] timeout_s" in only and 'isolation = "process"' in only
    mixed = str(RetriesExhaustedError("answer", ["q000|old|1"], {"timeout": 1, "http_503": 3}))
    assert "re-run the same command" in mixed and "timeout_s" in mixed
    other = str(RetriesExhaustedError("answer", ["q000|old|1"], {"http_503": 3}))
    assert "re-run the same command to retry them" in other and "timeout_s" not in other


SETUP = """def load():
    return {"pid": 1}
"""


@pytest.mark.slow
def test_a_finished_run_with_setup_is_refused_after_an_edit_of_the_setup_module(
        tmp_path: Path) -> None:
    (tmp_path / "finsetup.py").write_text(SETUP, "utf-8")
    proto = _protocol(tmp_path, "with_resources", {},
                      'setup = "finsetup:load"\npython_path = "."')

    def run() -> Any:
        return snapaudit_cli("run", str(proto), "--run-dir", "run", "--progress", "silent",
                             cwd=tmp_path)

    first = run()
    assert first.returncode == 0, first.stderr
    again = run()  # the spec is computed without building the systems: unchanged
    assert again.returncode == 0, again.stderr
    (tmp_path / "finsetup.py").write_text(SETUP.replace("1}", "2}"), "utf-8")
    edited = run()
    assert edited.returncode == 2
    assert "finsetup" in edited.stderr and "new run directory" in edited.stderr
