"""Tampering after lock is caught and named; protocol changes on resume are refused."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from snapaudit.errors import IntegrityError, ProtocolMismatchError
from snapaudit.progress import SilentProgress
from snapaudit.run.after.status import run_status
from snapaudit.run.engine import run_protocol_file
from tests.fakes.rag_service import FakeRagService
from tests.helpers.protocol import write_protocol, write_world


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("done")
    write_world(tmp)
    with FakeRagService() as svc:
        run_protocol_file(write_protocol(tmp, svc), tmp / "run", [], SilentProgress())
    # the service is gone; later runs would fail preflight, so tests use `status`
    return tmp


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst / "run"


def _sql(db: Path, *statements: str) -> None:
    with contextlib.closing(sqlite3.connect(db)) as con:
        for stmt in statements:
            con.execute(stmt)
        con.commit()


FORGED = '{"answer":"forged","doc_ids":null}'


def _edit_cell(run: Path) -> None:
    """A consistent rewrite (payload, payload_hash and the attempt's payload): only the lock
    chain can tell (a one-field edit is named by cell, tests/run/test_cell_integrity.py)."""
    import hashlib

    digest = hashlib.sha256(FORGED.encode()).hexdigest()
    _sql(run / "ledger.sqlite", "DROP TRIGGER cells_no_update",
         "DROP TRIGGER attempts_finish_once",
         f"UPDATE cells SET payload = '{FORGED}', payload_hash = '{digest}' "
         "WHERE rowid = (SELECT MIN(rowid) FROM cells)",
         f"UPDATE attempts SET payload = '{FORGED}' "
         "WHERE id = (SELECT attempt_id FROM cells WHERE rowid = (SELECT MIN(rowid) FROM cells))")


def _edit_attempt(run: Path) -> None:
    _sql(run / "ledger.sqlite", "DROP TRIGGER attempts_finish_once",
         "UPDATE attempts SET reason = 'forged' WHERE id = 1")


def _edit_first_lock(run: Path, part: str, key: str, value: str) -> None:
    db = run / "ledger.sqlite"
    with contextlib.closing(sqlite3.connect(db)) as con:
        record = json.loads(con.execute("SELECT record FROM locks WHERE seq=1").fetchone()[0])
    record[part][key] = value
    _sql(db, "DROP TRIGGER locks_no_update",
         f"UPDATE locks SET record = '{json.dumps(record)}' WHERE seq = 1")


def _edit_lock(run: Path) -> None:
    _edit_first_lock(run, "content", "n_cells", "31")


def _edit_history(run: Path) -> None:
    """The attempt history beside a lock (outside its hash) is checked against the ledger."""
    _edit_first_lock(run, "history", "n_attempts", "1")


def _edit_cohort(run: Path) -> None:
    path = run / "cohort.json"
    path.write_text(path.read_text().replace("what is item", "what was item", 1))


def _edit_protocol(run: Path) -> None:
    path = run / "protocol.resolved.toml"
    path.write_text(path.read_text().replace("draws = 1000", "draws = 2000"))


@pytest.mark.parametrize(("tamper", "named"), [
    (_edit_cell, "answer lock: ledger content 'accepted_sha256' changed"),
    (_edit_attempt, "answer lock: attempt history 'attempts_sha256' changed"),
    (_edit_history, "answer lock: attempt history 'n_attempts' changed"),
    (_edit_lock, "answer lock: record does not match its stored hash"),
    (_edit_cohort, "cohort.json changed"),
    (_edit_protocol, "protocol.resolved.toml changed after the run began: bootstrap.draws"),
])
def test_tampering_is_named(finished: Path, tmp_path: Path,
                            tamper: Callable[[Path], None], named: str) -> None:
    run = _copy(finished, tmp_path / "copy")
    run_status(run)  # intact copy verifies
    tamper(run)
    with pytest.raises(IntegrityError) as info:
        run_status(run)
    assert named in str(info.value)


def test_edited_lock_breaks_the_chain_after_it(finished: Path, tmp_path: Path) -> None:
    run = _copy(finished, tmp_path / "copy")
    _edit_lock(run)
    with pytest.raises(IntegrityError) as info:
        run_status(run)
    assert "semantic lock: chain broken" in str(info.value)


def test_resume_with_changed_output_field_is_refused_and_knobs_are_not(tmp_path: Path) -> None:
    write_world(tmp_path)
    with FakeRagService() as svc:
        proto = write_protocol(tmp_path, svc)
        run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
        run_protocol_file(proto, tmp_path / "run", ["run.concurrency=1", "run.timeout_s=9"],
                          SilentProgress())
        with pytest.raises(ProtocolMismatchError) as info:
            run_protocol_file(proto, tmp_path / "run", ["design.seed=8", "cohort.size=7"],
                              SilentProgress())
    assert info.value.changed_fields == ["cohort.size", "design.seed"]
    assert "concurrency = 1" in (tmp_path / "run" / "protocol.resolved.toml").read_text()


def test_locked_run_resumes_without_its_endpoints_but_not_after_tampering(
        finished: Path, tmp_path: Path) -> None:
    root = tmp_path / "copy"
    run = _copy(finished, root)
    from snapaudit.run.engine import run_protocol_file as rerun

    out = rerun(root / "protocol.toml", run, [], SilentProgress())  # service long gone
    assert out.results == json.loads((run / "results.json").read_text())
    _edit_cell(run)
    with pytest.raises(IntegrityError, match="answer lock: ledger content 'accepted_sha256'"):
        rerun(root / "protocol.toml", run, [], SilentProgress())
