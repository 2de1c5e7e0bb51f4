"""The cells table: accepted cells, once and immutably, and the content hashes locks bind."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from typing import Any

from snapaudit.hashing import canonical_json, sha256_json, sha256_text
from snapaudit.run.ledger.attempts import AttemptTable
from snapaudit.run.ledger.schema import Cell


class CellTable(AttemptTable):
    """Accepting cells (with their attempt's outcome in one transaction) and reading them."""

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
