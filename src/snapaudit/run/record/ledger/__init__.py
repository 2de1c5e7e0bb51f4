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

from snapaudit.run.record.ledger.attempts import FAILED_PROBE
from snapaudit.run.record.ledger.batches import BatchTable
from snapaudit.run.record.ledger.cells import CellTable
from snapaudit.run.record.ledger.lock_rows import LockTable
from snapaudit.run.record.ledger.schema import OUTCOMES, AttemptRow, Cell

__all__ = ["FAILED_PROBE", "OUTCOMES", "AttemptRow", "Cell", "Ledger"]


class Ledger(CellTable, LockTable, BatchTable):
    """One run's ledger file. Use as a context manager or call :meth:`close`."""
