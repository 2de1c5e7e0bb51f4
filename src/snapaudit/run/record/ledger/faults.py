"""SQLite errors of the ledger as clear snapaudit errors.

* a full disk (``SQLITE_FULL``, ``database or disk is full``, ``disk I/O error``): a
  :class:`StorageError` naming the file and saying to free space and re-run;
* a read-only or unopenable file (``SQLITE_READONLY``, ``SQLITE_CANTOPEN``): a
  :class:`StorageError`;
* a damaged file (``SQLITE_CORRUPT``: ``database disk image is malformed``,
  ``SQLITE_NOTADB``): an :class:`IntegrityError`;
* anything else (a trigger refusing an update, a UNIQUE key): an IntegrityError as before.

:func:`in_immediate_transaction` is the one transaction both stores of a run (the ledger and
the review store) write through: those errors mapped, and whatever is raised rolled back.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from snapaudit.errors import IntegrityError, SnapauditError, StorageError

T = TypeVar("T")
_FULL = ("SQLITE_FULL", "SQLITE_IOERR")
_READONLY = ("SQLITE_READONLY", "SQLITE_CANTOPEN", "SQLITE_PERM")
_DAMAGED = ("SQLITE_CORRUPT", "SQLITE_NOTADB")


def _kind(exc: sqlite3.Error) -> str:
    name = str(getattr(exc, "sqlite_errorname", "") or "")
    text = str(exc).lower()
    if name.startswith(_FULL) or "disk is full" in text or "disk i/o error" in text:
        return "full"
    if name.startswith(_READONLY) or "readonly database" in text or "unable to open" in text:
        return "readonly"
    if name.startswith(_DAMAGED) or "malformed" in text or "not a database" in text:
        return "damaged"
    return "other"


def is_storage(exc: sqlite3.Error) -> bool:
    """A full disk or a read-only file: what a reader may work around by reading only."""
    return _kind(exc) in ("full", "readonly")


def sqlite_error(path: Path, exc: sqlite3.Error) -> SnapauditError:
    """The snapaudit error for a SQLite error on the ledger at ``path``."""
    kind = _kind(exc)
    if kind == "full":
        why = str(exc) if "full" in str(exc) else f"{exc}; the disk is probably full"
        return StorageError(f"{path}: cannot write the ledger ({why}): free space and re-run "
                            "(everything already committed is kept)")
    if kind == "readonly":
        return StorageError(f"{path}: the ledger cannot be opened for writing ({exc}): the "
                            "folder is read-only or not accessible")
    if kind == "damaged":
        return IntegrityError(f"ledger {path} is damaged ({exc}); nothing was changed: "
                              "restore the run directory from a backup or start a new one")
    return IntegrityError(f"ledger {path.name}: {exc}")


def rollback_quietly(db: sqlite3.Connection) -> None:
    """Roll back what is open; a failing ROLLBACK (after a failed COMMIT SQLite may have
    ended the transaction itself) never masks the error that got us here."""
    if db.in_transaction:
        with contextlib.suppress(sqlite3.Error):
            db.execute("ROLLBACK")


def in_immediate_transaction(db: sqlite3.Connection, path: Path, fn: Callable[[], T]) -> T:
    """``fn()`` between ``BEGIN IMMEDIATE`` and ``COMMIT`` on ``db`` (the caller holds the
    connection's lock); a sqlite error becomes :func:`sqlite_error` of ``path``, and on any
    exception (Ctrl-C included) the transaction is rolled back first."""
    try:
        db.execute("BEGIN IMMEDIATE")
        out = fn()
        db.execute("COMMIT")
        return out
    except sqlite3.Error as exc:
        rollback_quietly(db)
        raise sqlite_error(path, exc) from exc
    except BaseException:
        rollback_quietly(db)
        raise
