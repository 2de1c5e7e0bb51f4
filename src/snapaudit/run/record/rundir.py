"""The run directory: one object that owns the layout of a run and its one open ledger.

Layout::

    DIR/protocol.resolved.toml   the resolved protocol (with overrides applied)
    DIR/cohort.json              the frozen cohort manifest
    DIR/ledger.sqlite            attempts, cells, locks, run metadata
    DIR/retrieval/passN/         the independent retrieval caches of the testbed
    DIR/tables/*.jsonl           answers, labels and gold in the interchange format
    DIR/results.json             the analysis
    DIR/report.html, report.md   the report
    DIR/judge-audit/<judge>.json, DIR/replicate/<generator>.json
    DIR/.lock                    held by the command writing the run (run/record/dirlock.py)

Every stage receives a :class:`RunDir` instead of a path; :meth:`RunDir.ledger` opens the
SQLite ledger once per command and :meth:`RunDir.close` closes it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from snapaudit import atomic
from snapaudit.errors import IntegrityError
from snapaudit.run.record.dirlock import DirLock
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.ledger.faults import sqlite_error
from snapaudit.run.record.ledger.store import recorded_began
from snapaudit.run.record.protocol import Protocol, load_protocol

LEDGER_NAME = "ledger.sqlite"
PROTOCOL_NAME = "protocol.resolved.toml"
COHORT_NAME = "cohort.json"
RESULTS_NAME = "results.json"
INITIALIZING_NAME = ".initializing"  # present while a run's first files are being written


class RunDir:
    """The files of one run. Use as a context manager so the ledger is closed."""

    def __init__(self, path: str | Path, *, read_only: bool = False,
                 command: str | None = None):
        """``read_only`` for commands that only read (``status``, ``report``, ``export``):
        they take no lock and can read a folder that cannot be written. A writing RunDir
        takes the folder's lock (:mod:`snapaudit.run.record.dirlock`) when it opens the ledger and
        holds it until :meth:`close`; ``command`` is what the lock file names as its holder.
        """
        self.path = Path(path)
        self.read_only = read_only
        self._ledger: Ledger | None = None
        self._lock = DirLock(self.path, command)
        self.cells_verified: dict[str, int] = {}  # stage -> accepted cells checked at open

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    def __enter__(self) -> RunDir:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------ layout

    @property
    def protocol_path(self) -> Path:
        return self.path / PROTOCOL_NAME

    @property
    def cohort_path(self) -> Path:
        return self.path / COHORT_NAME

    @property
    def ledger_path(self) -> Path:
        return self.path / LEDGER_NAME

    @property
    def results_path(self) -> Path:
        return self.path / RESULTS_NAME

    @property
    def tables_dir(self) -> Path:
        return self.path / "tables"

    def table(self, name: str) -> Path:
        """``tables/<name>.jsonl`` for ``answers``, ``labels`` or ``gold``."""
        return self.tables_dir / f"{name}.jsonl"

    @property
    def report_html(self) -> Path:
        return self.path / "report.html"

    @property
    def report_md(self) -> Path:
        return self.path / "report.md"

    def retrieval_cache(self, pass_no: int) -> Path:
        return self.path / "retrieval" / f"pass{pass_no}"

    def judge_audit(self, judge_name: str) -> Path:
        return self.path / "judge-audit" / f"{judge_name}.json"

    def replication(self, generator_name: str) -> Path:
        return self.path / "replicate" / f"{generator_name}.json"

    # ------------------------------------------------------------ the ledger

    def has_ledger(self) -> bool:
        return self.ledger_path.exists()

    def ledger(self) -> Ledger:
        """The run's ledger, opened (and created) on first use, then shared.

        A writing RunDir first takes the folder's lock (BusyError when another command
        holds it). A folder whose ``cohort.json`` or ``protocol.resolved.toml`` says the run
        began must have a ledger that recorded it (:func:`check_began`): otherwise an
        IntegrityError, with nothing changed. On opening, every accepted cell is checked
        against its payload hash and its attempt (:meth:`Ledger.verify_cells`); a mismatch
        is an IntegrityError naming the cell, and the ledger is closed again.
        """
        if self._ledger is None:
            if not self.read_only:
                self.path.mkdir(parents=True, exist_ok=True)
                self._lock.acquire()
            try:
                self._ledger = self._open_ledger()
            except BaseException:
                self._lock.release()
                raise
        return self._ledger

    def _open_ledger(self) -> Ledger:
        check_began(self)
        ledger = Ledger(self.ledger_path, read_only=self.read_only)
        try:
            self.cells_verified = ledger.verify_cells()
            if self.began_files() and ledger.get_meta("protocol_sha256") is None:
                raise not_begun(self, "its run metadata (the ledger lost what it recorded: "
                                "a -wal file gone after a crash?)")
        except sqlite3.Error as exc:
            ledger.close()
            raise sqlite_error(self.ledger_path, exc) from exc
        except BaseException:
            ledger.close()
            raise
        return ledger

    def close(self) -> None:
        if self._ledger is not None:
            self._ledger.close()
            self._ledger = None
        self._lock.release()

    def began_files(self) -> list[str]:
        """The files that say the run began: ``cohort.json`` (with ``protocol.resolved.toml``
        when present), written before the ledger records the start, unless that start was
        cut short (``.initializing`` is left until it is recorded). A folder of tables
        brought from elsewhere has a resolved protocol but no cohort manifest."""
        if (self.path / INITIALIZING_NAME).exists() or not self.cohort_path.exists():
            return []
        return [p.name for p in (self.cohort_path, self.protocol_path) if p.exists()]

    def initialized(self) -> bool:
        """True once the run recorded its protocol hash (the run has begun)."""
        return (self.has_ledger() or bool(self.began_files())) and \
            self.ledger().get_meta("protocol_sha256") is not None

    def base_dir(self) -> Path | None:
        """The folder the run was started from (relative protocol paths resolve there)."""
        base = self.ledger().get_meta("base_dir") if self.has_ledger() else None
        return Path(base) if base else None

    # ------------------------------------------------------------ files

    def load_protocol(self) -> Protocol:
        return load_protocol(self.protocol_path)

    def write_table(self, name: str, writer: Callable[[Path, Sequence[Any]], None],
                    rows: Sequence[Any]) -> Path:
        """Write ``tables/<name>.jsonl`` atomically (a kill never leaves half a table)."""
        self.tables_dir.mkdir(parents=True, exist_ok=True)
        path = self.table(name)
        with atomic.replacing(path) as tmp:
            writer(tmp, rows)
        return path


def not_begun(rd: RunDir, missing: str) -> IntegrityError:
    return IntegrityError(
        f"{rd.path}: {' and '.join(rd.began_files())} say the run began, but the ledger "
        f"{rd.ledger_path.name} is missing {missing}; nothing was changed. Restore the run "
        "directory (ledger.sqlite with its -wal file) from a backup, or start a new run "
        "directory")


def check_began(rd: RunDir) -> None:
    """Before the ledger is opened (which would create it): a run whose files say it began
    has a ledger file that is not empty."""
    if not rd.began_files():
        return
    if not rd.ledger_path.exists():
        raise not_begun(rd, "(the file does not exist)")
    if rd.ledger_path.stat().st_size == 0:
        raise not_begun(rd, "everything (the file is empty)")
    if not recorded_began(rd.ledger_path):
        raise not_begun(rd, "the record that the run began (its run metadata; a -wal file "
                        "lost after a crash?)")
