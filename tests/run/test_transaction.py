"""The one transaction of the run's stores (ledger/faults.in_immediate_transaction)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from snapaudit.errors import IntegrityError
from snapaudit.run.record.ledger.faults import in_immediate_transaction


def _db(tmp_path: Path) -> sqlite3.Connection:
    db = sqlite3.connect(tmp_path / "s.sqlite", isolation_level=None)
    db.execute("CREATE TABLE t (k INTEGER PRIMARY KEY)")
    return db


def test_commits_and_returns(tmp_path: Path) -> None:
    db = _db(tmp_path)
    assert in_immediate_transaction(db, tmp_path / "s.sqlite",
                                    lambda: db.execute("INSERT INTO t VALUES (1)").rowcount) == 1
    assert not db.in_transaction and db.execute("SELECT k FROM t").fetchall() == [(1,)]


def test_any_exception_rolls_back_and_propagates(tmp_path: Path) -> None:
    db = _db(tmp_path)

    def fail() -> None:
        db.execute("INSERT INTO t VALUES (2)")
        raise ValueError("refused")

    with pytest.raises(ValueError, match="refused"):
        in_immediate_transaction(db, tmp_path / "s.sqlite", fail)
    assert not db.in_transaction and db.execute("SELECT k FROM t").fetchall() == []


def test_a_sqlite_error_names_the_file_and_is_rolled_back(tmp_path: Path) -> None:
    db = _db(tmp_path)

    def duplicate() -> None:
        db.execute("INSERT INTO t VALUES (3)")
        db.execute("INSERT INTO t VALUES (3)")

    with pytest.raises(IntegrityError, match=r"s\.sqlite") as err:
        in_immediate_transaction(db, tmp_path / "s.sqlite", duplicate)
    assert isinstance(err.value.__cause__, sqlite3.IntegrityError)
    assert not db.in_transaction and db.execute("SELECT k FROM t").fetchall() == []
