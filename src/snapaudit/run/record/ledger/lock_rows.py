"""The locks table: lock records as stored.

The chain logic lives in :mod:`snapaudit.run.record.locks`.
"""

from __future__ import annotations

import json
import time
from typing import Any

from snapaudit.hashing import canonical_json
from snapaudit.run.record.ledger.store import LedgerStore


class LockTable(LedgerStore):
    """Appends and reads of ``locks``; triggers refuse any update or delete."""

    def add_lock(self, seq: int, stage: str, record: dict[str, Any], record_hash: str) -> None:
        self._tx(
            "INSERT INTO locks VALUES (?, ?, ?, ?, ?)",
            (seq, stage, canonical_json(record), record_hash, time.time()),
        )

    def locks(self) -> list[tuple[dict[str, Any], str]]:
        """Stored lock records and their stored hashes, in chain order."""
        rows = self._db.execute("SELECT record, record_hash FROM locks ORDER BY seq")
        return [(json.loads(r), str(h)) for r, h in rows]
