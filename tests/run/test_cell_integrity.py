"""Accepted cells of a stage that is not locked yet are checked on every open (issue #12.1).

A run stopped mid answer stage has accepted cells and no answer lock. An attacker edits one
byte of an accepted payload in ``ledger.sqlite`` with the triggers dropped; every command
that opens the run (resume, status, judge audit, report, export) must refuse it, naming the
stage and the cell.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from pathlib import Path

import pytest

from snapaudit.errors import IntegrityError, RetriesExhaustedError
from snapaudit.progress import SilentProgress
from snapaudit.run.after.status import format_status, run_status
from snapaudit.run.engine import run_protocol_file
from tests.fakes.rag_service import FakeRagService
from tests.helpers.protocol import write_protocol, write_world


def _sql(db: Path, *statements: str) -> None:
    with contextlib.closing(sqlite3.connect(db)) as con:
        for stmt in statements:
            con.execute(stmt)
        con.commit()


def _stopped_mid_answer(tmp: Path, svc: FakeRagService) -> tuple[Path, Path, str]:
    """A run whose answer stage stopped with some cells accepted; (protocol, run, a key)."""
    write_world(tmp)
    proto = write_protocol(tmp, svc, run={"max_attempts": 1})
    run = tmp / "run"
    with pytest.raises(RetriesExhaustedError):
        run_protocol_file(proto, run, [], SilentProgress())
    with contextlib.closing(sqlite3.connect(run / "ledger.sqlite")) as con:
        keys = [k for (k,) in con.execute("SELECT cell_key FROM cells ORDER BY cell_key")]
        assert con.execute("SELECT COUNT(*) FROM locks").fetchone() == (0,)
    assert 0 < len(keys) < 32  # stopped mid-stage: some accepted, no lock
    return proto, run, keys[0]


def _faulty() -> FakeRagService:
    # a third of the cells fail their first (and, with max_attempts 1, only) attempt
    return FakeRagService(fault_share=0.3, faults_per_key=1, fault_kinds=("500",))


def test_one_byte_edit_of_an_open_stage_cell_fails_resume_and_status(tmp_path: Path) -> None:
    with _faulty() as svc:
        proto, run, key = _stopped_mid_answer(tmp_path, svc)
        status = run_status(run)
        assert status.locked_verified == []
        assert status.open_verified["answer"] > 0
        text = format_status(status)
        assert "locked stages: none yet" in text
        assert f"answer ({status.open_verified['answer']} cells)" in text
        _sql(run / "ledger.sqlite", "DROP TRIGGER cells_no_update",
             "UPDATE cells SET payload = replace(payload, 'answer', 'answeR') "
             f"WHERE cell_key = '{key}'")
        with pytest.raises(IntegrityError) as info:
            run_protocol_file(proto, run, [], SilentProgress())
        assert f"answer cell {key}: payload does not match its payload_hash" in str(info.value)
        with pytest.raises(IntegrityError, match=f"answer cell {key}"):
            run_status(run)
        # nothing was locked in and no answers table was written from the forged cell
        assert not (run / "tables" / "answers.jsonl").exists()
        with contextlib.closing(sqlite3.connect(run / "ledger.sqlite")) as con:
            assert con.execute("SELECT COUNT(*) FROM locks").fetchone() == (0,)


def test_edit_with_a_matching_payload_hash_is_caught_by_the_attempt(tmp_path: Path) -> None:
    with _faulty() as svc:
        proto, run, key = _stopped_mid_answer(tmp_path, svc)
        with contextlib.closing(sqlite3.connect(run / "ledger.sqlite")) as con:
            body = con.execute("SELECT payload FROM cells WHERE cell_key=?", (key,)).fetchone()[0]
        forged = json.dumps({**json.loads(body), "answer": "forged"}, sort_keys=True,
                            separators=(",", ":"))
        import hashlib

        digest = hashlib.sha256(forged.encode()).hexdigest()
        _sql(run / "ledger.sqlite", "DROP TRIGGER cells_no_update",
             f"UPDATE cells SET payload = '{forged}', payload_hash = '{digest}' "
             f"WHERE cell_key = '{key}'")
        with pytest.raises(IntegrityError) as info:
            run_protocol_file(proto, run, [], SilentProgress())
        assert f"answer cell {key}: payload differs from its attempt's payload" in str(info.value)


def test_edit_of_the_accepted_attempt_payload_is_caught(tmp_path: Path) -> None:
    with _faulty() as svc:
        _, run, key = _stopped_mid_answer(tmp_path, svc)
        _sql(run / "ledger.sqlite", "DROP TRIGGER attempts_finish_once",
             "UPDATE attempts SET payload = replace(payload, 'answer', 'answeR') "
             f"WHERE stage = 'answer' AND cell_key = '{key}' AND outcome = 'accepted'")
        with pytest.raises(IntegrityError, match=f"answer cell {key}: payload differs"):
            run_status(run)


def test_intact_stopped_run_resumes_to_completion(tmp_path: Path) -> None:
    with _faulty() as svc:
        proto, run, _ = _stopped_mid_answer(tmp_path, svc)
        out = run_protocol_file(proto, run, [], SilentProgress())
        status = run_status(run)
    assert out.results_path.exists()
    assert status.locked_verified == ["answer", "semantic", "gold"]
    assert status.open_verified == {}
    assert "locked stages (cells, attempts or gold file match the lock chain): " \
           "answer, semantic, gold" in format_status(status)
