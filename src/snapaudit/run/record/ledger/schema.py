"""The ledger's schema: migrations (recorded in the ``migrations`` table) and its records."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

OUTCOMES = ("accepted", "transport_invalid", "error", "interrupted")

MIGRATIONS: list[tuple[str, str]] = [
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
    (
        "provider batches (run.mode = 'batch'): a batch and the attempts it carries",
        """
        CREATE TABLE batches (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            local_id TEXT NOT NULL UNIQUE,
            stage TEXT NOT NULL,
            provider TEXT NOT NULL,
            endpoint TEXT NOT NULL,
            state TEXT NOT NULL,
            provider_batch_id TEXT UNIQUE,
            provider_status TEXT,
            n_requests INTEGER NOT NULL,
            n_bytes INTEGER NOT NULL,
            created_at REAL NOT NULL,
            submitted_at REAL,
            ended_at REAL
        );
        CREATE TABLE batch_attempts (
            batch_id INTEGER NOT NULL REFERENCES batches(id),
            attempt_id INTEGER NOT NULL UNIQUE REFERENCES attempts(id),
            custom_id TEXT NOT NULL UNIQUE
        );
        CREATE INDEX batch_attempts_batch ON batch_attempts (batch_id);
        CREATE TRIGGER batch_attempts_no_update BEFORE UPDATE ON batch_attempts
            BEGIN SELECT RAISE(ABORT, 'batch membership is immutable'); END;
        CREATE TRIGGER batch_id_once BEFORE UPDATE OF provider_batch_id ON batches
            WHEN OLD.provider_batch_id IS NOT NULL
            BEGIN SELECT RAISE(ABORT, 'a provider batch id is recorded once'); END;
        """,
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


def split_script(script: str) -> list[str]:
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
