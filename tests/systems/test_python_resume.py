"""A Python system resumed after kills: the same seeds (so the same answers) as an
uninterrupted run; the seed advances only after an attempt that got a response."""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from pathlib import Path

import pytest

import snapaudit
from snapaudit.run.execution.schedule import derive_seed
from snapaudit.run.record.ledger import Ledger
from tests.helpers.cli import finish_run, kill_mid_stage, run_cli
from tests.helpers.ledger_view import accepted, accepted_seeds, query
from tests.helpers.protocol import python_protocol_text, save_protocol, write_world


def seeded_protocol(tmp: Path, name: str = "audit.toml", extra: str = "",
                    target: str = "tests.fakes.python_systems:seeded") -> Path:
    text = python_protocol_text(f'target = "{target}"\n{extra}', run={"concurrency": 1})
    path = save_protocol(tmp, text)
    return path.rename(tmp / name) if path.name != name else path


def test_the_seed_advances_only_after_an_attempt_that_got_a_response(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        def begin() -> tuple[int, int]:
            return ledger._in_tx(lambda: ledger.begin_numbered_attempt_op("answer", "k", "h"))

        first_id, first = begin()
        assert ledger.seed_index("answer", "k", first) == 1  # = the attempt number
        ledger.finish_attempt(first_id, "interrupted")
        a2, n2 = begin()
        assert ledger.seed_index("answer", "k", n2) == 1  # killed: no response
        ledger.finish_attempt(a2, "transport_invalid", reason="timeout")
        a3, n3 = begin()
        assert ledger.seed_index("answer", "k", n3) == 1  # a timeout: no response
        ledger.finish_attempt(a3, "transport_invalid", reason="worker_died")
        a3b, n3b = begin()
        assert ledger.seed_index("answer", "k", n3b) == 1  # a crashed worker: no response
        ledger.finish_attempt(a3b, "transport_invalid", reason="http_503")
        a4, n4 = begin()
        assert ledger.seed_index("answer", "k", n4) == 2  # a 503 is a response
        ledger.finish_attempt(a4, "transport_invalid", reason="exception")
        _, n5 = begin()
        assert (n5, ledger.seed_index("answer", "k", n5)) == (6, 3)
        assert ledger.seed_index("answer", "other", 1) == 1


@pytest.mark.slow
def test_a_python_system_killed_several_times_gives_the_uninterrupted_answers(
        tmp_path: Path) -> None:
    # seed_flaky depends on (question, seed) alone: a kill inside an attempt that would raise
    # must not change the answer (the resumed attempt keeps the seed, as it got no response)
    fake = "tests.fakes.python_systems:seed_flaky"
    write_world(tmp_path, n=6)
    proto = seeded_protocol(tmp_path, extra="kwargs = { delay_s = 0.05 }", target=fake)
    run_dir = tmp_path / "killed"
    kills = 0
    while kills < 4 and kill_mid_stage(proto, run_dir, 0.02 + 0.03 * (kills % 3)):
        kills += 1
    finish_run(proto, run_dir)
    assert kills >= 3
    db = run_dir / "ledger.sqlite"
    assert query(db, "SELECT COUNT(*) FROM attempts WHERE outcome='interrupted'")[0][0] >= 1

    clean_dir = tmp_path / "clean"
    snapaudit.audit(seeded_protocol(tmp_path, "clean.toml", "kwargs = { delay_s = 0.0 }",
                                    target=fake), clean_dir)
    killed = {k: json.loads(p) for k, (_, p) in accepted(db).items()}
    clean = {k: json.loads(p) for k, (_, p) in accepted(clean_dir / "ledger.sqlite").items()}
    assert killed == clean
    assert accepted_seeds(db, 0) == accepted_seeds(clean_dir / "ledger.sqlite", 0)
    assert json.loads((run_dir / "results.json").read_text())["kernels"] == \
        json.loads((clean_dir / "results.json").read_text())["kernels"]
    # a cell whose first seed raised answered with its second seed, in both runs
    retried = [k for k in clean if derive_seed(0, "answer", k, 1) % 4 == 0]
    assert retried, "the fixed design seed gives at least one retried cell"
    for key in retried:
        seed = next(s for s in (derive_seed(0, "answer", key, i) for i in range(2, 9))
                    if s % 4)
        assert killed[key]["answer"] == f"answer {seed % 7}"


def test_audit_inside_a_running_loop_and_aaudit(tmp_path: Path) -> None:
    import asyncio

    write_world(tmp_path, n=6)
    proto = seeded_protocol(tmp_path)

    async def notebook_cell() -> tuple[snapaudit.AnalysisResult, snapaudit.AnalysisResult]:
        blocking = snapaudit.audit(proto, tmp_path / "sync")  # a loop is running here
        awaited = await snapaudit.aaudit(proto, tmp_path / "async")
        return blocking, awaited

    blocking, awaited = asyncio.run(notebook_cell())
    assert blocking.to_json() == awaited.to_json()
    assert accepted(tmp_path / "sync" / "ledger.sqlite").keys() == \
        accepted(tmp_path / "async" / "ledger.sqlite").keys()
    assert len(accepted(tmp_path / "async" / "ledger.sqlite")) == 6 * 2 * 2


def test_long_answers_and_unstable_ids_are_warned_about(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from snapaudit.cli import cli

    write_world(tmp_path, n=6)
    proto = seeded_protocol(tmp_path, target="tests.fakes.python_systems:verbose")
    out = CliRunner().invoke(cli, ["run", str(proto), "--run-dir", str(tmp_path / "run"),
                                   "--progress", "silent"])
    assert out.exit_code == 0, out.output
    path = tmp_path / "run" / "results.json"
    doc = json.loads(path.read_text())
    assert [w["code"] for w in doc["warnings"]] == ["long_answers", "unstable_doc_ids"]
    assert "median words: new 15, old 15" in doc["warnings"][0]["message"]
    assert snapaudit.read_results(path).to_json() == doc  # round-trips (extra)
    assert "Warning (long_answers)" in out.output and "Warning (unstable_doc_ids)" in out.output
    # answers the protocol fits: no warnings key at all
    snapaudit.audit(seeded_protocol(tmp_path, "fits.toml"), tmp_path / "fits")
    assert "warnings" not in json.loads((tmp_path / "fits" / "results.json").read_text())


def _accepted_now(db: Path) -> int:
    try:
        return len(accepted(db)) if db.exists() else 0
    except sqlite3.Error:  # the schema may not exist yet
        return 0


@pytest.mark.slow
def test_kills_at_three_cell_counts_end_with_the_uninterrupted_answers_and_seeds(
        tmp_path: Path) -> None:
    write_world(tmp_path, n=6)
    fake = "tests.fakes.python_systems:seed_flaky"  # deterministic in (question, seed)
    proto = seeded_protocol(tmp_path, extra="kwargs = { delay_s = 0.05 }", target=fake)
    run_dir = tmp_path / "killed"
    db = run_dir / "ledger.sqlite"
    at_kill = []
    for cells in (3, 9, 15):  # of 24: early, middle, late in the answer stage
        proc = run_cli(proto, run_dir)
        deadline = time.monotonic() + 60
        while proc.poll() is None and _accepted_now(db) < cells \
                and time.monotonic() < deadline:
            time.sleep(0.005)
        assert proc.poll() is None, "the run ended before the kill"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()
        at_kill.append(_accepted_now(db))
    assert at_kill[0] >= 3 and at_kill == sorted(at_kill) and at_kill[-1] < 24
    finish_run(proto, run_dir)

    clean_dir = tmp_path / "clean"
    snapaudit.audit(seeded_protocol(tmp_path, "clean.toml", "kwargs = { delay_s = 0.0 }",
                                    target=fake), clean_dir)
    clean_db = clean_dir / "ledger.sqlite"
    assert {k: json.loads(p) for k, (_, p) in accepted(db).items()} == \
        {k: json.loads(p) for k, (_, p) in accepted(clean_db).items()}
    seeds = accepted_seeds(db, 0)
    assert len(seeds) == 24 and seeds == accepted_seeds(clean_db, 0)
    first = {k: derive_seed(0, "answer", k, 1) for k in seeds}
    redrawn = {k for k, seed in first.items() if seed % 4 == 0}  # the first draw raised
    assert redrawn and all(seeds[k] != first[k] for k in redrawn)
    assert all(seeds[k] == first[k] for k in set(seeds) - redrawn)
    assert query(db, "SELECT COUNT(*) FROM attempts WHERE outcome='interrupted'")[0][0] >= 1


@pytest.mark.slow
def test_a_resumed_run_has_the_lock_hashes_of_an_uninterrupted_one(tmp_path: Path) -> None:
    from snapaudit.run.after.status import format_status, run_status

    write_world(tmp_path, n=6)
    fake = "tests.fakes.python_systems:seed_flaky"  # deterministic in (question, seed)
    proto = seeded_protocol(tmp_path, extra="kwargs = { delay_s = 0.05 }", target=fake)
    killed, db = tmp_path / "killed", tmp_path / "killed" / "ledger.sqlite"
    for cells in (4, 12):
        proc = run_cli(proto, killed)
        deadline = time.monotonic() + 60
        while proc.poll() is None and _accepted_now(db) < cells \
                and time.monotonic() < deadline:
            time.sleep(0.005)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()
    final = run_cli(proto, killed)
    _, err = final.communicate(timeout=120)
    assert final.returncode == 0, err.decode()
    assert query(db, "SELECT COUNT(*) FROM attempts WHERE outcome='interrupted'")[0][0] >= 1
    snapaudit.audit(proto, tmp_path / "clean")  # the same protocol file, never interrupted
    locks = "SELECT stage, record_hash FROM locks ORDER BY seq"
    assert query(db, locks) == query(tmp_path / "clean" / "ledger.sqlite", locks)
    attempts = query(db, "SELECT COUNT(*) FROM attempts WHERE stage='answer'")[0][0]
    assert attempts > query(tmp_path / "clean" / "ledger.sqlite",
                            "SELECT COUNT(*) FROM attempts WHERE stage='answer'")[0][0]
    shown = format_status(run_status(killed))
    assert f"binds 24 accepted cells ({attempts} attempts checked, not hashed)" in shown
