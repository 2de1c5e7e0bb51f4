"""The cells table: accepted cells, once and immutably, and the content hashes locks bind."""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Mapping
from typing import Any

from snapaudit.errors import IntegrityError
from snapaudit.hashing import canonical_json, sha256_json, sha256_text
from snapaudit.run.record.ledger.attempts import AttemptTable
from snapaudit.run.record.ledger.schema import Cell

Publish = Callable[[Mapping[str, Any]], Mapping[str, Any]]


def published_text(payload: str | None, publish: Publish) -> str | None:
    """An attempt's stored payload text as an artifact publishes it (unchanged when
    ``publish`` leaves it so)."""
    if payload is None:
        return None
    value = json.loads(payload)
    public = publish(value)
    return payload if public is value else canonical_json(public)


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

    def verify_cells(self, stage: str | None = None) -> dict[str, int]:
        """Check every accepted cell (of ``stage``, or of all stages) against its own record:
        ``payload_hash`` is the SHA-256 of the stored payload, and the cell's attempt exists,
        belongs to the same stage and key, has outcome ``accepted`` and the same payload.

        Returns stage -> number of cells checked; raises IntegrityError naming the stage and
        cell of every mismatch. This catches an edit of one field (e.g. a payload rewritten
        with the triggers dropped); a consistent rewrite of payload, hash and attempt needs a
        lock to be caught (the lock chain binds the content of locked stages).
        """
        sql = ("SELECT c.stage, c.cell_key, c.payload, c.payload_hash, a.stage, a.cell_key, "
               "a.outcome, a.payload FROM cells c LEFT JOIN attempts a ON a.id = c.attempt_id")
        params: tuple[Any, ...] = ()
        if stage is not None:
            sql += " WHERE c.stage=?"
            params = (stage,)
        counts: dict[str, int] = {}
        problems: list[str] = []
        for st, key, body, digest, a_stage, a_key, outcome, a_body in self._db.execute(
                sql + " ORDER BY c.stage, c.cell_key", params):
            counts[st] = counts.get(st, 0) + 1
            where = f"{st} cell {key}"
            if sha256_text(body) != digest:
                problems.append(f"{where}: payload does not match its payload_hash")
            if (a_stage, a_key, outcome) != (st, key, "accepted"):
                problems.append(f"{where}: its attempt is missing or not the accepted attempt")
            elif a_body != body:
                problems.append(f"{where}: payload differs from its attempt's payload")
        if problems:
            shown = problems[:20] + ([f"... {len(problems) - 20} more"]
                                     if len(problems) > 20 else [])
            raise IntegrityError("accepted cells changed in the ledger:\n  "
                                 + "\n  ".join(shown))
        return counts

    def content_hashes(self, stage: str, publish: Publish | None = None) -> dict[str, str]:
        """Hashes of a stage's ledger content (each accepted cell is checked by
        :meth:`verify_cells` first, so a lock never binds an edited cell): what was accepted
        (``accepted_sha256``: each cell's key and payload hash, ``n_cells``) and how
        (``cells_sha256``: key, accepted attempt and payload; ``attempts_sha256``: every
        attempt row; ``n_attempts``). With ``publish`` (a payload as an artifact publishes
        it) and a payload it changes, also ``public_accepted_sha256``,
        ``public_cells_sha256`` and ``public_attempts_sha256``: the same hashes of the
        published payloads, which an artifact's verifier recomputes."""
        self.verify_cells(stage)
        cells = [(k, a, json.loads(p), h) for k, a, p, h in self._db.execute(
            "SELECT cell_key, attempt_id, payload, payload_hash FROM cells WHERE stage=? "
            "ORDER BY cell_key",
            (stage,),
        )]
        attempts = self._db.execute(
            "SELECT id, cell_key, attempt_no, request_hash, outcome, reason, error, payload "
            "FROM attempts WHERE stage=? ORDER BY id",
            (stage,),
        ).fetchall()
        out = {
            "accepted_sha256": sha256_json([[k, h] for k, _, _, h in cells]),
            "cells_sha256": sha256_json([[k, a, p] for k, a, p, _ in cells]),
            "n_cells": str(len(cells)),
            "attempts_sha256": sha256_json([list(r) for r in attempts]),
            "n_attempts": str(len(attempts)),
        }
        if publish is not None and any(publish(p) is not p for _, _, p, _ in cells):
            public = [(k, a, publish(p)) for k, a, p, _ in cells]
            out["public_accepted_sha256"] = sha256_json([[k, sha256_json(p)]
                                                         for k, _, p in public])
            out["public_cells_sha256"] = sha256_json([[k, a, p] for k, a, p in public])
            out["public_attempts_sha256"] = sha256_json(
                [[*r[:7], published_text(r[7], publish)] for r in attempts])
        return out
