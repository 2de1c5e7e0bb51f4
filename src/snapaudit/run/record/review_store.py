"""The review tables of a run's ledger: change decisions and the annotators' label locks.

Both live in ``ledger.sqlite`` next to the stages, created on first use, append-only
(triggers refuse UPDATE and DELETE). They are written by review sessions, which never take
the run directory's lock: several processes may write at once, each in its own
``BEGIN IMMEDIATE`` transaction with SQLite's busy timeout (as the ledger's own writes).

* ``review_decisions``: one row per decision (a revised decision is a new row; the last row
  per annotator and question stands). Each row names the hash of exactly what was shown
  (``shown_sha256``), whether gold was among it, the run it is bound to (``bound_sha256``:
  the stored hash of the semantic lock, which chains to the answer lock) and a hash chain
  over the rows (``row_sha256`` of the row's fields and the previous row's hash), so an
  edited, dropped or reordered row is found by :func:`check_decision_chain`.
* ``review_label_locks``: one row per annotator who finished labelling (the hash of the
  ``human:NAME`` stage's accepted cells when they said done, :func:`label_lock_content`).
"""

from __future__ import annotations

import sqlite3
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from snapaudit.errors import IntegrityError
from snapaudit.hashing import sha256_json
from snapaudit.run.record.ledger.faults import in_immediate_transaction, sqlite_error

if TYPE_CHECKING:
    from snapaudit.run.record.ledger import Ledger

T = TypeVar("T")

DECISION_VERSION = "snapaudit/review-decision/v1"
LABEL_LOCK_VERSION = "snapaudit/human-label-lock/v1"

_SCHEMA = [
    """CREATE TABLE IF NOT EXISTS review_decisions (
        id INTEGER PRIMARY KEY AUTOINCREMENT, annotator TEXT NOT NULL,
        question_id TEXT NOT NULL, decision TEXT NOT NULL, note TEXT NOT NULL,
        at TEXT NOT NULL, shown_sha256 TEXT NOT NULL, gold_shown INTEGER NOT NULL,
        bound_sha256 TEXT NOT NULL, prev_sha256 TEXT, row_sha256 TEXT NOT NULL)""",
    """CREATE TABLE IF NOT EXISTS review_label_locks (
        annotator TEXT PRIMARY KEY, stage TEXT NOT NULL, bound_sha256 TEXT NOT NULL,
        content_sha256 TEXT NOT NULL, n_cells INTEGER NOT NULL, at TEXT NOT NULL,
        row_sha256 TEXT NOT NULL)""",
    *(f"""CREATE TRIGGER IF NOT EXISTS {table}_no_{op} BEFORE {op.upper()} ON {table}
        BEGIN SELECT RAISE(ABORT, '{what}'); END"""
      for table, what in (("review_decisions", "review decisions are append-only"),
                          ("review_label_locks", "label locks are immutable"))
      for op in ("update", "delete")),
]


@dataclass(frozen=True, slots=True)
class DecisionRow:
    """One stored decision (``schema_version`` 1)."""

    annotator: str
    question_id: str
    decision: str
    note: str
    at: str
    shown_sha256: str
    gold_shown: bool
    bound_sha256: str
    prev_sha256: str | None = None
    row_sha256: str = ""

    def expected_hash(self) -> str:
        body = {k: v for k, v in asdict(self).items() if k != "row_sha256"}
        return sha256_json({"version": DECISION_VERSION, **body})

    def to_json(self) -> dict[str, Any]:
        return {"schema_version": 1, **asdict(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DecisionRow:
        fields = {k: data[k] for k in cls.__slots__}
        fields["gold_shown"] = bool(fields["gold_shown"])
        return cls(**fields)


@dataclass(frozen=True, slots=True)
class LabelLock:
    """An annotator's label lock (``schema_version`` 1)."""

    annotator: str
    stage: str
    bound_sha256: str
    content_sha256: str
    n_cells: int
    at: str
    row_sha256: str = ""

    def expected_hash(self) -> str:
        body = {k: v for k, v in asdict(self).items() if k != "row_sha256"}
        return sha256_json({"version": LABEL_LOCK_VERSION, **body})

    def to_json(self) -> dict[str, Any]:
        return {"schema_version": 1, **asdict(self)}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LabelLock:
        return cls(**{k: data[k] for k in cls.__slots__})


def label_lock_content(hashes: dict[str, str]) -> str:
    """What a label lock binds of a stage's content hashes: its accepted cells (immutable),
    not its attempts (a later run marks a killed save's unfinished attempt interrupted)."""
    return sha256_json({k: hashes[k] for k in ("cells_sha256", "n_cells")})


def check_decision_chain(rows: Sequence[DecisionRow]) -> None:
    """Each row's hash is its own, and each names the previous row's (IntegrityError)."""
    prev: str | None = None
    for i, row in enumerate(rows, start=1):
        if row.prev_sha256 != prev or row.row_sha256 != row.expected_hash():
            raise IntegrityError(f"review decision #{i} ({row.annotator}, {row.question_id}) "
                                 "does not match its hash chain: the review table was edited")
        prev = row.row_sha256


class ReviewStore:
    """The review tables of the ledger at ``path``, on a connection of their own."""

    def __init__(self, path: Path):
        self.path = path
        self._lock = threading.Lock()
        try:
            self._db = sqlite3.connect(str(path), isolation_level=None, timeout=30.0,
                                       check_same_thread=False)
            self._tx(lambda: [self._db.execute(stmt) for stmt in _SCHEMA])
        except sqlite3.Error as exc:
            raise sqlite_error(path, exc) from exc

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _tx(self, fn: Callable[[], T]) -> T:
        with self._lock:
            return in_immediate_transaction(self._db, self.path, fn)

    def add_decision(self, row: DecisionRow, check: Callable[[], None] | None = None
                     ) -> DecisionRow:
        """Append ``row`` to the chain (its ``prev``/``row`` hashes filled in); ``check``
        runs inside the same transaction first (it may raise to refuse the write)."""
        def body() -> DecisionRow:
            if check is not None:
                check()
            last = self._db.execute("SELECT row_sha256 FROM review_decisions "
                                    "ORDER BY id DESC LIMIT 1").fetchone()
            linked = DecisionRow(**{**_fields(row), "prev_sha256": last[0] if last else None})
            done = DecisionRow(**{**_fields(linked), "row_sha256": linked.expected_hash()})
            self._db.execute(
                "INSERT INTO review_decisions (annotator, question_id, decision, note, at, "
                "shown_sha256, gold_shown, bound_sha256, prev_sha256, row_sha256) VALUES "
                "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (done.annotator, done.question_id, done.decision, done.note, done.at,
                 done.shown_sha256, int(done.gold_shown), done.bound_sha256, done.prev_sha256,
                 done.row_sha256))
            return done

        return self._tx(body)

    def decisions(self) -> list[DecisionRow]:
        """Every decision, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT annotator, question_id, decision, note, at, shown_sha256, gold_shown, "
                "bound_sha256, prev_sha256, row_sha256 FROM review_decisions ORDER BY id"
            ).fetchall()
        return [DecisionRow(a, q, d, n, at, s, bool(g), b, p, r)
                for a, q, d, n, at, s, g, b, p, r in rows]

    def add_label_lock(self, lock: LabelLock) -> None:
        done = LabelLock(**{**_fields(lock), "row_sha256": lock.expected_hash()})

        def body() -> None:
            if self._db.execute("SELECT 1 FROM review_label_locks WHERE annotator=?",
                                (lock.annotator,)).fetchone() is not None:
                raise IntegrityError(f"the labels of {lock.annotator} are already locked")
            self._db.execute("INSERT INTO review_label_locks VALUES (?, ?, ?, ?, ?, ?, ?)",
                             (done.annotator, done.stage, done.bound_sha256,
                              done.content_sha256, done.n_cells, done.at, done.row_sha256))

        self._tx(body)

    def label_locks(self) -> list[LabelLock]:
        with self._lock:
            rows = self._db.execute(
                "SELECT annotator, stage, bound_sha256, content_sha256, n_cells, at, row_sha256 "
                "FROM review_label_locks ORDER BY annotator").fetchall()
        return [LabelLock(a, s, b, c, int(n), at, r) for a, s, b, c, n, at, r in rows]


def _fields(obj: DecisionRow | LabelLock) -> dict[str, Any]:
    return asdict(obj)


def read_review_tables(path: Path) -> tuple[list[DecisionRow], list[LabelLock]]:
    """The review tables of the ledger at ``path``, read only (empty when it has none)."""
    from snapaudit.run.record.ledger.store import connect_read_only

    db = connect_read_only(path)
    try:
        names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        decisions = [DecisionRow(a, q, d, n, at, s, bool(g), b, p, r) for a, q, d, n, at, s, g,
                     b, p, r in db.execute(
                         "SELECT annotator, question_id, decision, note, at, shown_sha256, "
                         "gold_shown, bound_sha256, prev_sha256, row_sha256 FROM "
                         "review_decisions ORDER BY id")] \
            if "review_decisions" in names else []
        locks = [LabelLock(a, s, b, c, int(n), at, r) for a, s, b, c, n, at, r in db.execute(
            "SELECT annotator, stage, bound_sha256, content_sha256, n_cells, at, row_sha256 "
            "FROM review_label_locks ORDER BY annotator")] \
            if "review_label_locks" in names else []
    except sqlite3.Error as exc:
        raise sqlite_error(path, exc) from exc
    finally:
        db.close()
    return decisions, locks


def checked_label_locks(ledger: Ledger) -> list[LabelLock]:
    """Every annotator's label lock, each checked against the accepted cells of its stage
    now (IntegrityError when they changed after the lock)."""
    _rows, locks = read_review_tables(ledger.path)
    for lock in locks:
        if label_lock_content(ledger.content_hashes(lock.stage)) != lock.content_sha256:
            raise IntegrityError(f"the labels of {lock.stage} changed after they were locked")
    return locks
