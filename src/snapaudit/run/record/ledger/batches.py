"""The batches table: provider batches (``run.mode = "batch"``) and the attempts they carry.

A batch row and its attempts are committed in one transaction *before* the batch is sent
(state ``submitting``); the provider's batch id is written the moment the create call
returns (``submitted``, once: a trigger refuses a second id); the results are applied to
the batch's attempts in the same transaction that marks the batch ``ended``. Attempts of a
batch still ``submitting`` or ``submitted`` are never marked interrupted
(:meth:`AttemptTable.interrupt_unfinished`): a resume polls the batch instead.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any

from snapaudit.errors import ConfigError
from snapaudit.reasons import FailureReason
from snapaudit.run.record.ledger.attempts import AttemptTable

OPEN_STATES = ("submitting", "submitted")


@dataclass(frozen=True, slots=True)
class BatchRow:
    id: int
    local_id: str
    stage: str
    provider: str
    endpoint: str
    state: str
    provider_batch_id: str | None
    provider_status: str | None
    n_requests: int
    n_bytes: int
    created_at: float


@dataclass(frozen=True, slots=True)
class BatchMember:
    attempt_id: int
    cell_key: str
    attempt_no: int
    custom_id: str


@dataclass(frozen=True, slots=True)
class NewRequest:
    """One attempt to commit into a new batch (its number is checked, not chosen here)."""

    cell_key: str
    request_hash: str
    attempt_no: int
    custom_id: str


_COLS = ("id, local_id, stage, provider, endpoint, state, provider_batch_id, provider_status, "
         "n_requests, n_bytes, created_at")


class BatchTable(AttemptTable):
    """Writes and reads of ``batches`` and ``batch_attempts``."""

    def batch_tag(self) -> str:
        """A tag unique to this run directory, for local batch ids and custom ids."""
        tag = self.get_meta("batch_tag")
        if tag is None:
            seed = f"{self.get_meta('protocol_sha256')}|{self.path.resolve()}|{time.time_ns()}"
            tag = hashlib.sha256(seed.encode()).hexdigest()[:12]
            self.set_meta("batch_tag", tag)
        return tag

    def next_attempt_no(self, stage: str, cell_key: str) -> int:
        row = self._db.execute(
            "SELECT COALESCE(MAX(attempt_no), 0) FROM attempts WHERE stage=? AND cell_key=?",
            (stage, cell_key)).fetchone()
        return int(row[0]) + 1

    def create_batch(self, stage: str, provider: str, endpoint: str,
                     requests: Sequence[NewRequest], n_bytes: int) -> BatchRow:
        """Commit the attempts of a new batch and the batch (``submitting``) in one
        transaction, before anything is sent."""
        def body() -> int:
            row = self._db.execute("SELECT COALESCE(MAX(id), 0) FROM batches").fetchone()
            batch_id = int(row[0]) + 1
            self._db.execute(
                "INSERT INTO batches (id, local_id, stage, provider, endpoint, state, "
                "n_requests, n_bytes, created_at) VALUES (?, ?, ?, ?, ?, 'submitting', ?, ?, ?)",
                (batch_id, f"sa-{self.batch_tag_stored()}-{batch_id}", stage, provider,
                 endpoint, len(requests), n_bytes, time.time()))
            for req in requests:
                attempt_id = self.begin_attempt_op(stage, req.cell_key, req.request_hash)
                if self.attempt_no(attempt_id) != req.attempt_no:
                    raise ValueError(f"attempt number of {req.cell_key} changed under the batch")
                self._db.execute("INSERT INTO batch_attempts VALUES (?, ?, ?)",
                                 (batch_id, attempt_id, req.custom_id))
            return batch_id
        batch_id = self._in_tx(body)
        return self.batch(batch_id)

    def batch_tag_stored(self) -> str:
        tag = self.get_meta("batch_tag")
        assert tag is not None, "batch_tag() first"
        return tag

    def record_provider_id(self, batch_id: int, provider_batch_id: str) -> None:
        """Write the provider's id (once) the moment the create call returns."""
        self._tx("UPDATE batches SET provider_batch_id=?, state='submitted', submitted_at=? "
                 "WHERE id=?", (provider_batch_id, time.time(), batch_id))

    def record_provider_status(self, batch_id: int, status: str) -> None:
        self._tx("UPDATE batches SET provider_status=? WHERE id=?", (status, batch_id))

    def end_batch(self, batch_id: int, status: str,
                  ops: Iterable[Callable[[Any], Any]]) -> None:
        """Apply the results (``ops``: attempt outcomes and accepted cells, made one at a time
        if a generator) and mark the batch ended, in one transaction."""
        def body() -> None:
            for op in ops:
                op(self)
            self._db.execute("UPDATE batches SET state='ended', provider_status=?, ended_at=? "
                             "WHERE id=?", (status, time.time(), batch_id))
        self._in_tx(body)

    def forget_batch(self, local_id: str) -> BatchRow:
        """End an open batch without its results (the user gave it up: the provider deleted
        it): its attempts become transport-invalid (``batch_forgotten``), so their cells go
        into a later batch; one transaction. Returns the batch as it was."""
        row = self._db.execute(f"SELECT {_COLS} FROM batches WHERE local_id=?", (local_id,))
        found = row.fetchone()
        if found is None:
            raise ConfigError(f"no batch {local_id!r} in this run (`snapaudit status` lists "
                              "its batches)")
        batch = BatchRow(*found)
        if batch.state not in OPEN_STATES:
            raise ConfigError(f"batch {local_id} has ended ({batch.provider_status}); only an "
                              "open batch can be forgotten")
        detail = (f"batch {local_id} forgotten on request (provider batch "
                  f"{batch.provider_batch_id or 'never recorded'})")
        ops = [partial(AttemptTable.finish_attempt_op, attempt_id=m.attempt_id,
                       outcome="transport_invalid", reason=FailureReason.BATCH_FORGOTTEN,
                       error=detail)
               for m in self.batch_members(batch.id)]
        self.end_batch(batch.id, "forgotten", ops)
        return batch

    def batch(self, batch_id: int) -> BatchRow:
        row = self._db.execute(f"SELECT {_COLS} FROM batches WHERE id=?", (batch_id,))
        return BatchRow(*row.fetchone())

    def batches(self, stage: str | None = None, *, open_only: bool = False) -> list[BatchRow]:
        sql, params = f"SELECT {_COLS} FROM batches WHERE 1=1", []
        if stage is not None:
            sql += " AND stage=?"
            params.append(stage)
        if open_only:
            sql += " AND state IN ('submitting', 'submitted')"
        return [BatchRow(*r) for r in self._db.execute(sql + " ORDER BY id", params)]

    def batch_members(self, batch_id: int) -> list[BatchMember]:
        rows = self._db.execute(
            "SELECT a.id, a.cell_key, a.attempt_no, m.custom_id FROM batch_attempts m "
            "JOIN attempts a ON a.id = m.attempt_id WHERE m.batch_id=? ORDER BY a.id",
            (batch_id,))
        return [BatchMember(int(i), str(k), int(n), str(c)) for i, k, n, c in rows]
