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

Every stage receives a :class:`RunDir` instead of a path; :meth:`RunDir.ledger` opens the
SQLite ledger once per command and :meth:`RunDir.close` closes it.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from snapaudit.run.ledger import Ledger
from snapaudit.run.protocol import Protocol, load_protocol

LEDGER_NAME = "ledger.sqlite"
PROTOCOL_NAME = "protocol.resolved.toml"
COHORT_NAME = "cohort.json"
RESULTS_NAME = "results.json"


class RunDir:
    """The files of one run. Use as a context manager so the ledger is closed."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self._ledger: Ledger | None = None
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

        On opening, every accepted cell is checked against its payload hash and its attempt
        (:meth:`Ledger.verify_cells`); a mismatch is an IntegrityError naming the cell, and
        the ledger is closed again.
        """
        if self._ledger is None:
            self.path.mkdir(parents=True, exist_ok=True)
            ledger = Ledger(self.ledger_path)
            try:
                self.cells_verified = ledger.verify_cells()
            except BaseException:
                ledger.close()
                raise
            self._ledger = ledger
        return self._ledger

    def close(self) -> None:
        if self._ledger is not None:
            self._ledger.close()
            self._ledger = None

    def initialized(self) -> bool:
        """True once the run recorded its protocol hash (the run has begun)."""
        return self.has_ledger() and self.ledger().get_meta("protocol_sha256") is not None

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
        tmp = path.with_suffix(".jsonl.tmp")
        writer(tmp, rows)
        tmp.replace(path)
        return path

    def write_results(self, results: dict[str, Any]) -> Path:
        """Write ``results.json`` atomically."""
        tmp = self.results_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(results, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                       encoding="utf-8")
        tmp.replace(self.results_path)
        return self.results_path
