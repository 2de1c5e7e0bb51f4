"""The ledger file: connection, explicit transactions, group commit, migrations, metadata."""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Self, TypeVar

from snapaudit.errors import IntegrityError
from snapaudit.run.ledger.schema import MIGRATIONS, split_script

T = TypeVar("T")


class LedgerStore:
    """One open ledger file; its tables are reached through ``snapaudit.run.ledger.Ledger``."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        # one thread at a time: the runner's group committer hands the connection to a
        # worker thread while the event loop waits for it
        self._db = sqlite3.connect(str(self.path), isolation_level=None, timeout=30.0,
                                   check_same_thread=False)
        # held by every transaction and by close(): the connection is never closed under a
        # transaction running in another thread (that crashed SQLite on Ctrl-C)
        self._lock = threading.RLock()
        self._closed = False
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._migrate()

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
        try:
            self._db.execute("BEGIN IMMEDIATE")
            out = fn()
            self._db.execute("COMMIT")
            return out
        except sqlite3.DatabaseError as exc:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise IntegrityError(f"ledger {self.path.name}: {exc}") from exc
        except BaseException:
            if self._db.in_transaction:
                self._db.execute("ROLLBACK")
            raise

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
                    results.append(exc if not isinstance(exc, sqlite3.DatabaseError)
                                   else IntegrityError(f"ledger {self.path.name}: {exc}"))
                self._db.execute("RELEASE op")

        self._in_tx(body)
        return results

    def _migrate(self) -> None:
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
            self._db.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------ meta

    def get_meta(self, key: str) -> str | None:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def set_meta(self, key: str, value: str) -> None:
        self._tx("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))
