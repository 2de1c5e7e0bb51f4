"""The ledger file: connection, explicit transactions, group commit, migrations, metadata."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Self, TypeVar

from snapaudit.errors import IntegrityError, StorageError
from snapaudit.run.record.ledger.faults import (
    in_immediate_transaction,
    is_storage,
    rollback_quietly,
    sqlite_error,
)
from snapaudit.run.record.ledger.schema import MIGRATIONS, split_script

T = TypeVar("T")

RUN_BEGAN = "run_began"  # the meta row written with the run's first metadata


class LedgerStore:
    """One open ledger file; its tables are reached through ``run.record.ledger.Ledger``."""

    def __init__(self, path: str | Path, *, read_only: bool = False):
        """Open (and create, unless ``read_only``) the ledger and bring its schema up to date.

        ``read_only`` (``status``, ``report``, ``export``): when the folder is read-only or
        its disk is full and no write-ahead log is pending, the file is read as immutable.
        SQLite errors become clear errors (:func:`sqlite_error`).
        """
        self.path = Path(path)
        # held by every transaction and by close(): the connection is never closed under a
        # transaction running in another thread (that crashed SQLite on Ctrl-C)
        self._lock = threading.RLock()
        self._closed = False
        try:
            self._db = self._open()
        except sqlite3.Error as exc:
            if not (read_only and is_storage(exc) and not _wal_pending(self.path)):
                raise sqlite_error(self.path, exc) from exc
            self._db = self._open_immutable()

    def _open(self) -> sqlite3.Connection:
        # one thread at a time: the runner's group committer hands the connection to a
        # worker thread while the event loop waits for it
        self._db = sqlite3.connect(str(self.path), isolation_level=None, timeout=30.0,
                                   check_same_thread=False)
        try:
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=FULL")
            self._db.execute("PRAGMA foreign_keys=ON")
            self._migrate()
        except BaseException:
            self._db.close()
            raise
        return self._db

    def _open_immutable(self) -> sqlite3.Connection:
        uri = self.path.resolve().as_uri() + "?immutable=1"
        try:
            self._db = sqlite3.connect(uri, uri=True, isolation_level=None,
                                       check_same_thread=False)
            if self._pending_migrations():
                self._db.close()
                raise StorageError(f"{self.path}: this ledger needs a schema upgrade, which "
                                   "cannot be written here (read-only folder or full disk)")
        except sqlite3.Error as exc:
            raise sqlite_error(self.path, exc) from exc
        return self._db

    # ------------------------------------------------------------ plumbing

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._lock:
            self._closed = True
            self._db.close()

    def _in_tx(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` in one explicit transaction; sqlite errors become IntegrityError."""
        with self._lock:
            if self._closed:
                raise IntegrityError(f"ledger {self.path.name} is closed")
            return self._in_tx_locked(fn)

    def _in_tx_locked(self, fn: Callable[[], T]) -> T:
        return in_immediate_transaction(self._db, self.path, fn)

    def _rollback(self) -> None:
        rollback_quietly(self._db)

    def _tx(self, sql: str, params: tuple[Any, ...] = ()) -> sqlite3.Cursor:
        return self._in_tx(lambda: self._db.execute(sql, params))

    def run_batch(self, ops: Sequence[Callable[[Any], Any]]) -> list[Any]:
        """Group commit: every op in one transaction (one fsync), each in its own savepoint.

        Returns each op's result, or the exception it raised (that op alone is rolled back).
        The ops are the ``*_op`` methods' bodies, e.g. ``lambda l: l.begin_attempt_op(...)``.
        """
        results: list[Any] = []

        def body() -> None:
            for op in ops:
                self._db.execute("SAVEPOINT op")
                try:
                    results.append(op(self))
                except Exception as exc:
                    self._db.execute("ROLLBACK TO op")
                    results.append(exc if not isinstance(exc, sqlite3.Error)
                                   else sqlite_error(self.path, exc))
                self._db.execute("RELEASE op")

        self._in_tx(body)
        return results

    def _pending_migrations(self) -> bool:
        """Whether a migration is still to be applied (read without a write transaction)."""
        has_table = self._db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                                     "name = 'migrations'").fetchone()
        if has_table is None:
            return True
        done = {r[0] for r in self._db.execute("SELECT version FROM migrations")}
        return not set(range(1, len(MIGRATIONS) + 1)) <= done

    def _migrate(self) -> None:
        if not self._pending_migrations():
            return  # nothing to write: a reader on a full disk still opens the ledger
        self._db.execute("BEGIN IMMEDIATE")
        try:
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS migrations "
                "(version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at REAL NOT NULL)"
            )
            done = {r[0] for r in self._db.execute("SELECT version FROM migrations")}
            for version, (name, script) in enumerate(MIGRATIONS, start=1):
                if version in done:
                    continue
                for stmt in split_script(script):
                    self._db.execute(stmt)
                self._db.execute(
                    "INSERT INTO migrations VALUES (?, ?, ?)", (version, name, time.time())
                )
            self._db.execute("COMMIT")
        except BaseException:
            self._rollback()
            raise

    # ------------------------------------------------------------ meta

    def get_meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def meta_items(self, prefix: str) -> list[tuple[str, str]]:
        """``(key, value)`` of the meta rows whose key starts with ``prefix``, by key."""
        rows = self._db.execute("SELECT key, value FROM meta WHERE substr(key, 1, ?) = ? "
                                "ORDER BY key", (len(prefix), prefix))
        return [(str(k), str(v)) for k, v in rows]

    def set_meta(self, key: str, value: str) -> None:
        self._tx("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    def begin_run(self, meta: dict[str, str]) -> None:
        """Record that the run began: ``meta`` and the ``run_began`` row, in one transaction
        (a ledger has all of them or none)."""
        def body() -> None:
            for key, value in {**meta, RUN_BEGAN: repr(time.time())}.items():
                self._db.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

        self._in_tx(body)


def _wal_pending(path: Path) -> bool:
    """Whether ``path``'s write-ahead log holds anything (then only SQLite may read it)."""
    wal = path.with_name(path.name + "-wal")
    return wal.exists() and wal.stat().st_size > 0


def recorded_began(path: Path) -> bool:
    """Whether the ledger at ``path`` recorded that its run began, read without writing
    anything (a ledger with a pending write-ahead log is left to SQLite: True)."""
    if _wal_pending(path):
        return True
    try:
        db = sqlite3.connect(path.resolve().as_uri() + "?immutable=1", uri=True)
        try:
            return db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = "
                              "'meta'").fetchone() is not None and db.execute(
                "SELECT value FROM meta WHERE key = 'protocol_sha256'").fetchone() is not None
        finally:
            db.close()
    except sqlite3.Error as exc:
        raise sqlite_error(path, exc) from exc


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A read-only connection to the ledger at ``path``: immutable when the folder is
    read-only or its disk full and no write-ahead log is pending; clear errors otherwise."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        db.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
        return db
    except sqlite3.Error as exc:
        db.close()
        if not is_storage(exc) or _wal_pending(path):
            raise sqlite_error(path, exc) from exc
    return sqlite3.connect(path.resolve().as_uri() + "?immutable=1", uri=True)
