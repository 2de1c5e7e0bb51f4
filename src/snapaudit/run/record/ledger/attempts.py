"""The attempts table: one row per external call, committed durably before the call."""

from __future__ import annotations

import time
from typing import Any

from snapaudit.errors import IntegrityError
from snapaudit.hashing import canonical_json
from snapaudit.run.record.ledger.schema import OUTCOMES, AttemptRow
from snapaudit.run.record.ledger.store import LedgerStore
from snapaudit.systems.redact import redact

# reasons of a transport-invalid attempt that no response came back for (see seed_index);
# worker_died: a Python system's worker process crashed mid-call (a kill, not an answer)
NO_RESPONSE: frozenset[str] = frozenset({
    "timeout", "connection", "worker_died", "batch_expired", "batch_cancelled",
    "batch_failed", "batch_missing_result"})
# attempt meta: a failed circuit-breaker probe, which is not one of its cell's max_attempts
# (snapaudit.run.execution.breaker); status counts these attempts apart
FAILED_PROBE = "failed_probe"

# meta: the last attempt id before a run started again (a Python system's code changed before
# any cell was accepted, snapaudit.run.bound_systems); seeds count only the attempts after it
RESTART_KEY = "seeds_after_attempt"


class AttemptTable(LedgerStore):
    """Writes and reads of ``attempts``; the outcome of an attempt is written once."""

    def begin_attempt(self, stage: str, cell_key: str, request_hash: str) -> int:
        """Record and durably commit an attempt before its external call; returns its id."""
        return self._in_tx(lambda: self.begin_attempt_op(stage, cell_key, request_hash))

    def begin_attempt_op(self, stage: str, cell_key: str, request_hash: str) -> int:
        """The body of :meth:`begin_attempt`, for use inside :meth:`run_batch`."""
        return self.begin_numbered_attempt_op(stage, cell_key, request_hash)[0]

    def begin_numbered_attempt_op(self, stage: str, cell_key: str,
                                  request_hash: str) -> tuple[int, int]:
        """:meth:`begin_attempt_op` returning ``(attempt id, attempt number)``."""
        if self._accepted_exists(stage, cell_key):
            raise IntegrityError(f"{stage} cell {cell_key} is already accepted")
        row = self._db.execute(
            "SELECT COALESCE(MAX(attempt_no), 0) FROM attempts WHERE stage=? AND cell_key=?",
            (stage, cell_key),
        ).fetchone()
        attempt_no = int(row[0]) + 1
        cur = self._db.execute(
            "INSERT INTO attempts (stage, cell_key, attempt_no, request_hash, started_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (stage, cell_key, attempt_no, request_hash, time.time()),
        )
        assert cur.lastrowid is not None
        return cur.lastrowid, attempt_no

    def seed_index(self, stage: str, cell_key: str, attempt_no: int) -> int:
        """The index the seed of attempt ``attempt_no`` is derived from: one more than the
        number of earlier attempts of the cell that got a response (:data:`NO_RESPONSE`).

        An attempt no response ever came back for (killed or interrupted, a timeout, a
        dropped connection, a worker process that died mid-call, a batch that never delivered
        the request's result) is retried
        with the same seed, so a resumed run draws what an uninterrupted one draws; the seed
        advances only after a response that was unusable. The first attempt's index is 1
        (= its attempt number), so a run that never fails has the seeds it always had.
        Attempts before a restart (:data:`RESTART_KEY`) do not count: a run started again
        draws what a fresh one draws."""
        marks = ", ".join("?" * len(NO_RESPONSE))
        row = self._db.execute(
            "SELECT COUNT(*) FROM attempts WHERE stage=? AND cell_key=? AND attempt_no<? "
            "AND id > (SELECT COALESCE(MAX(CAST(value AS INTEGER)), 0) FROM meta WHERE key=?) "
            "AND outcome IS NOT NULL AND outcome != 'interrupted' AND NOT "
            f"(outcome = 'transport_invalid' AND COALESCE(reason, '') IN ({marks}))",
            (stage, cell_key, attempt_no, RESTART_KEY, *sorted(NO_RESPONSE))).fetchone()
        return int(row[0]) + 1

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
            (time.time(), outcome, reason, None if error is None else redact(error),
             None if payload is None else canonical_json(payload),
             canonical_json(usage or {}), latency_s,
             None if meta is None else canonical_json(meta), attempt_id),
        )

    def interrupt_unfinished(self) -> int:
        """Mark attempts left without an outcome by a killed run as ``interrupted`` (not
        those riding in a provider batch still open: the batch's results will finish them)."""
        cur = self._tx(
            "UPDATE attempts SET outcome='interrupted', finished_at=? WHERE outcome IS NULL "
            "AND id NOT IN (SELECT a.attempt_id FROM batch_attempts a JOIN batches b "
            "ON b.id = a.batch_id WHERE b.state IN ('submitting', 'submitted'))",
            (time.time(),),
        )
        return cur.rowcount

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

    def failed_probes(self) -> dict[str, int]:
        """stage -> its attempts marked as failed breaker probes (:data:`FAILED_PROBE`)."""
        rows = self._db.execute(
            "SELECT stage, COUNT(*) FROM attempts WHERE json_extract(meta, ?) = 1 "
            "GROUP BY stage ORDER BY stage", (f"$.{FAILED_PROBE}",))
        return {str(stage): int(n) for stage, n in rows}

    def usage_totals(self) -> dict[str, tuple[int, int, int, int, int, int]]:
        """stage -> (attempts, attempts reporting usage, prompt tokens, completion tokens,
        and of those tokens the ones of attempts sent in a provider batch: prompt,
        completion), summed over every attempt of the stage (retries and failed calls
        included)."""
        tokens = ("COALESCE(json_extract(usage, '$.prompt_tokens'), 0)",
                  "COALESCE(json_extract(usage, '$.completion_tokens'), 0)")
        batched = "json_extract(meta, '$.batch') IS NOT NULL"
        rows = self._db.execute(
            "SELECT stage, COUNT(*), "
            "SUM(usage IS NOT NULL AND usage NOT IN ('', '{}')), "
            f"SUM({tokens[0]}), SUM({tokens[1]}), "
            f"SUM(CASE WHEN {batched} THEN {tokens[0]} ELSE 0 END), "
            f"SUM(CASE WHEN {batched} THEN {tokens[1]} ELSE 0 END) "
            "FROM attempts GROUP BY stage ORDER BY stage")
        out: dict[str, tuple[int, int, int, int, int, int]] = {}
        for stage, n, m, p, c, bp, bc in rows:
            out[str(stage)] = (int(n), int(m or 0), int(p or 0), int(c or 0), int(bp or 0),
                               int(bc or 0))
        return out

    def failed_attempts(self, stage: str) -> list[tuple[str, str, str | None]]:
        """``(cell key, reason, error)`` of every failed attempt of ``stage``, oldest first."""
        rows = self._db.execute(
            "SELECT cell_key, COALESCE(reason, outcome), error FROM attempts WHERE stage=? "
            "AND outcome IN ('transport_invalid', 'error') ORDER BY id", (stage,))
        return [(str(k), str(r), e) for k, r, e in rows]

    def failure_details(self, stage: str) -> list[tuple[str, int, str, str | None, str | None]]:
        """``(cell key, attempt number, reason, error, meta JSON)`` of every failed attempt
        of ``stage``, newest first."""
        rows = self._db.execute(
            "SELECT cell_key, attempt_no, COALESCE(reason, outcome), error, meta FROM attempts "
            "WHERE stage=? AND outcome IN ('transport_invalid', 'error') ORDER BY id DESC",
            (stage,))
        return [(str(k), int(n), str(r), e, m) for k, n, r, e, m in rows]

    def _accepted_exists(self, stage: str, cell_key: str) -> bool:
        row = self._db.execute(
            "SELECT 1 FROM cells WHERE stage=? AND cell_key=?", (stage, cell_key)
        ).fetchone()
        return row is not None
