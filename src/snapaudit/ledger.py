"""The SQLite ledger: attempts, accepted cells, locks, run metadata and migrations.

Generic over stages (``retrieval``, ``answer``, ``judge:<name>``). The contract:

* :meth:`Ledger.begin_attempt` commits an attempt row durably *before* the external call;
* :meth:`Ledger.finish_attempt` records its outcome (once; triggers refuse a second write);
* :meth:`Ledger.accept` accepts a cell once, immutably: a UNIQUE key refuses a second
  accept and triggers refuse any UPDATE or DELETE of accepted cells and locks.

WAL mode, ``synchronous=FULL``, one explicit transaction per write. Secrets are never
passed in, so never stored.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from snapaudit.errors import IntegrityError
from snapaudit.hashing import canonical_json, sha256_json, sha256_text

T = TypeVar("T")

OUTCOMES = ("accepted", "transport_invalid", "error", "interrupted")

_MIGRATIONS: list[tuple[str, str]] = [
    (
        "initial schema",
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE attempts (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            stage TEXT NOT NULL,
            cell_key TEXT NOT NULL,
            attempt_no INTEGER NOT NULL,
            request_hash TEXT NOT NULL,
            started_at REAL NOT NULL,
            finished_at REAL,
            outcome TEXT,
            reason TEXT,
            error TEXT,
            payload TEXT,
            usage TEXT,
            latency_s REAL,
            UNIQUE (stage, cell_key, attempt_no)
        );
        CREATE TABLE cells (
            stage TEXT NOT NULL,
            cell_key TEXT NOT NULL,
            attempt_id INTEGER NOT NULL REFERENCES attempts(id),
            payload TEXT NOT NULL,
            payload_hash TEXT NOT NULL,
            accepted_at REAL NOT NULL,
            PRIMARY KEY (stage, cell_key)
        );
        CREATE TABLE locks (
            seq INTEGER PRIMARY KEY,
            stage TEXT NOT NULL UNIQUE,
            record TEXT NOT NULL,
            record_hash TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE TRIGGER cells_no_update BEFORE UPDATE ON cells
            BEGIN SELECT RAISE(ABORT, 'accepted cells are immutable'); END;
        CREATE TRIGGER cells_no_delete BEFORE DELETE ON cells
            BEGIN SELECT RAISE(ABORT, 'accepted cells are immutable'); END;
        CREATE TRIGGER locks_no_update BEFORE UPDATE ON locks
            BEGIN SELECT RAISE(ABORT, 'locks are immutable'); END;
        CREATE TRIGGER locks_no_delete BEFORE DELETE ON locks
            BEGIN SELECT RAISE(ABORT, 'locks are immutable'); END;
        CREATE TRIGGER attempts_no_delete BEFORE DELETE ON attempts
            BEGIN SELECT RAISE(ABORT, 'attempts are append-only'); END;
        CREATE TRIGGER attempts_finish_once BEFORE UPDATE ON attempts
            WHEN OLD.outcome IS NOT NULL
            BEGIN SELECT RAISE(ABORT, 'an attempt outcome is written once'); END;
        CREATE INDEX attempts_cell ON attempts (stage, cell_key);
        """,
    ),
    (
        "attempt meta (model, finish reason, controls left to the provider)",
        "ALTER TABLE attempts ADD COLUMN meta TEXT;",
    ),
]


@dataclass(frozen=True, slots=True)
class Cell:
    """An accepted cell."""

    stage: str
    cell_key: str
    attempt_id: int
    payload: dict[str, Any]


@dataclass(frozen=True, slots=True)
class AttemptRow:
    id: int
    stage: str
    cell_key: str
    attempt_no: int
    request_hash: str
    outcome: str | None
    reason: str | None
    latency_s: float | None


class Ledger:
    """One run's ledger file. Use as a context manager or call :meth:`close`."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        # one thread at a time: the runner's group committer hands the connection to a
        # worker thread while the event loop waits for it
        self._db = sqlite3.connect(str(self.path), isolation_level=None, timeout=30.0,
                                   check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")
        self._db.execute("PRAGMA foreign_keys=ON")
        self._migrate()

    # ------------------------------------------------------------ plumbing

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._db.close()

    def _in_tx(self, fn: Callable[[], T]) -> T:
        """Run ``fn`` in one explicit transaction; sqlite errors become IntegrityError."""
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

    def run_batch(self, ops: Sequence[Callable[[Ledger], Any]]) -> list[Any]:
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
            for version, (name, script) in enumerate(_MIGRATIONS, start=1):
                if version in done:
                    continue
                for stmt in _split_script(script):
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

    # ------------------------------------------------------------ attempts

    def begin_attempt(self, stage: str, cell_key: str, request_hash: str) -> int:
        """Record and durably commit an attempt before its external call; returns its id."""
        return self._in_tx(lambda: self.begin_attempt_op(stage, cell_key, request_hash))

    def begin_attempt_op(self, stage: str, cell_key: str, request_hash: str) -> int:
        """The body of :meth:`begin_attempt`, for use inside :meth:`run_batch`."""
        if self._accepted_exists(stage, cell_key):
            raise IntegrityError(f"{stage} cell {cell_key} is already accepted")
        row = self._db.execute(
            "SELECT COALESCE(MAX(attempt_no), 0) FROM attempts WHERE stage=? AND cell_key=?",
            (stage, cell_key),
        ).fetchone()
        cur = self._db.execute(
            "INSERT INTO attempts (stage, cell_key, attempt_no, request_hash, started_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (stage, cell_key, int(row[0]) + 1, request_hash, time.time()),
        )
        assert cur.lastrowid is not None
        return cur.lastrowid

    def attempt_no(self, attempt_id: int) -> int:
        row = self._db.execute("SELECT attempt_no FROM attempts WHERE id=?", (attempt_id,))
        return int(row.fetchone()[0])

    def finish_attempt(
        self,
        attempt_id: int,
        outcome: str,
        *,
        payload: dict[str, Any] | None = None,
        reason: str | None = None,
        error: str | None = None,
        usage: dict[str, int] | None = None,
        latency_s: float | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        """Write an attempt's outcome (once)."""
        self._in_tx(lambda: self.finish_attempt_op(
            attempt_id, outcome, payload=payload, reason=reason, error=error, usage=usage,
            latency_s=latency_s, meta=meta))

    def finish_attempt_op(
        self,
        attempt_id: int,
        outcome: str,
        *,
        payload: dict[str, Any] | None = None,
        reason: str | None = None,
        error: str | None = None,
        usage: dict[str, int] | None = None,
        latency_s: float | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        if outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {outcome!r}")
        self._db.execute(
            "UPDATE attempts SET finished_at=?, outcome=?, reason=?, error=?, payload=?, "
            "usage=?, latency_s=?, meta=? WHERE id=?",
            (time.time(), outcome, reason, error,
             None if payload is None else canonical_json(payload),
             canonical_json(usage or {}), latency_s,
             None if meta is None else canonical_json(meta), attempt_id),
        )

    def finish_and_accept(
        self,
        stage: str,
        cell_key: str,
        attempt_id: int,
        payload: dict[str, Any],
        *,
        usage: dict[str, int] | None = None,
        latency_s: float | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        """``finish_attempt(accepted)`` and :meth:`accept` in one transaction."""
        self._in_tx(lambda: self.finish_and_accept_op(
            stage, cell_key, attempt_id, payload, usage=usage, latency_s=latency_s, meta=meta))

    def finish_and_accept_op(
        self,
        stage: str,
        cell_key: str,
        attempt_id: int,
        payload: dict[str, Any],
        *,
        usage: dict[str, int] | None = None,
        latency_s: float | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.finish_attempt_op(attempt_id, "accepted", payload=payload, usage=usage,
                               latency_s=latency_s, meta=meta)
        self._insert_cell(stage, cell_key, attempt_id, canonical_json(payload), time.time())

    def accept(self, stage: str, cell_key: str, attempt_id: int, payload: dict[str, Any]) -> None:
        """Accept a cell once; a second accept raises IntegrityError."""
        body = canonical_json(payload)
        self._in_tx(lambda: self._insert_cell(stage, cell_key, attempt_id, body, time.time()))

    def _insert_cell(
        self, stage: str, cell_key: str, attempt_id: int, body: str, now: float
    ) -> None:
        if self._accepted_exists(stage, cell_key):
            raise sqlite3.IntegrityError("already accepted; accepted cells are immutable")
        self._db.execute(
            "INSERT INTO cells VALUES (?, ?, ?, ?, ?, ?)",
            (stage, cell_key, attempt_id, body, sha256_text(body), now),  # body is canonical
        )

    def _accepted_exists(self, stage: str, cell_key: str) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM cells WHERE stage=? AND cell_key=?", (stage, cell_key)
        ).fetchone()
        return row is not None

    def interrupt_unfinished(self) -> int:
        """Mark attempts left without an outcome by a killed run as ``interrupted``."""
        cur = self._tx(
            "UPDATE attempts SET outcome='interrupted', finished_at=? WHERE outcome IS NULL",
            (time.time(),),
        )
        return cur.rowcount

    # ------------------------------------------------------------ reading

    def accepted_keys(self, stage: str) -> set[str]:
        rows = self._db.execute("SELECT cell_key FROM cells WHERE stage=?", (stage,))
        return {str(r[0]) for r in rows}

    def stages(self) -> list[str]:
        """Every stage with at least one accepted cell, sorted."""
        rows = self._db.execute("SELECT DISTINCT stage FROM cells ORDER BY stage")
        return [str(r[0]) for r in rows]

    def cells(self, stage: str) -> Iterator[Cell]:
        """Accepted cells of a stage, ordered by cell key."""
        rows = self._db.execute(
            "SELECT stage, cell_key, attempt_id, payload FROM cells WHERE stage=? "
            "ORDER BY cell_key",
            (stage,),
        ).fetchall()
        for stage_, key, aid, body in rows:
            yield Cell(stage_, key, int(aid), json.loads(body))

    def attempts(self, stage: str | None = None) -> list[AttemptRow]:
        sql = ("SELECT id, stage, cell_key, attempt_no, request_hash, outcome, reason, latency_s "
               "FROM attempts")
        params: tuple[Any, ...] = ()
        if stage is not None:
            sql += " WHERE stage=?"
            params = (stage,)
        return [AttemptRow(*r) for r in self._db.execute(sql + " ORDER BY id", params)]

    def outcome_counts(self) -> dict[str, dict[str, int]]:
        """stage -> outcome (``pending`` for none yet) -> number of attempts."""
        out: dict[str, dict[str, int]] = {}
        for stage, outcome, n in self._db.execute(
            "SELECT stage, COALESCE(outcome, 'pending'), COUNT(*) FROM attempts "
            "GROUP BY 1, 2 ORDER BY 1, 2"
        ):
            out.setdefault(stage, {})[outcome] = int(n)
        return out

    def content_hashes(self, stage: str) -> dict[str, str]:
        """Hashes of a stage's ledger content: accepted cells and every attempt."""
        cells = self._db.execute(
            "SELECT cell_key, attempt_id, payload FROM cells WHERE stage=? ORDER BY cell_key",
            (stage,),
        ).fetchall()
        attempts = self._db.execute(
            "SELECT id, cell_key, attempt_no, request_hash, outcome, reason, error, payload "
            "FROM attempts WHERE stage=? ORDER BY id",
            (stage,),
        ).fetchall()
        return {
            "cells_sha256": sha256_json([[k, a, json.loads(p)] for k, a, p in cells]),
            "n_cells": str(len(cells)),
            "attempts_sha256": sha256_json([list(r) for r in attempts]),
            "n_attempts": str(len(attempts)),
        }

    # ------------------------------------------------------------ locks

    def add_lock(self, seq: int, stage: str, record: dict[str, Any], record_hash: str) -> None:
        self._tx(
            "INSERT INTO locks VALUES (?, ?, ?, ?, ?)",
            (seq, stage, canonical_json(record), record_hash, time.time()),
        )

    def locks(self) -> list[tuple[dict[str, Any], str]]:
        """Stored lock records and their stored hashes, in chain order."""
        rows = self._db.execute("SELECT record, record_hash FROM locks ORDER BY seq")
        return [(json.loads(r), str(h)) for r, h in rows]


def _split_script(script: str) -> list[str]:
    """Split a migration script into statements, keeping trigger bodies whole."""
    stmts: list[str] = []
    buf: list[str] = []
    for line in script.strip().splitlines():
        buf.append(line)
        text = "\n".join(buf).strip()
        in_trigger = text.upper().startswith("CREATE TRIGGER")
        if text.endswith(";") and (not in_trigger or text.upper().endswith("END;")):
            stmts.append(text)
            buf = []
    return stmts
