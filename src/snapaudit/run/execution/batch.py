"""Cells through provider batch APIs (``[run] mode = "batch"``), durably.

Per round: every cell not accepted and not riding in an open batch gets a new attempt; the
attempts are grouped by provider (backend, endpoint, model) and cut into batches of at most
``max_requests`` requests and ``max_bytes`` bytes; each batch and its attempts are committed
in one transaction (state ``submitting``) *before* anything is sent. Sending records the
provider's batch id the moment the create call returns (``submitted``). Open batches are
polled every ``run.batch_poll_s`` seconds; an ended batch's results are matched to its
attempts by ``custom_id`` (never by position) and written with the batch's ``ended`` state
in one transaction: a valid reply is accepted (immutably; UNKNOWN and wrong answers
included), a per-request error, an expired or cancelled request, or a request with no
result is a transport-invalid attempt whose cell goes into a later batch.

A batch found ``submitting`` without a provider id (a run killed or a connection lost
around the create call) is looked up at the provider first (:meth:`BatchProvider.find`:
OpenAI by the batch's ``metadata``, Anthropic by creation time and request count) and
adopted if found; only a batch the provider does not know is sent (again, with the same
attempts and custom ids). Attempts of an open batch are never marked interrupted: a
resume polls the batch, it never submits its attempts again.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial

from snapaudit.errors import (
    BackendError,
    ConfigError,
    FailFastError,
    NotFoundError,
    RetriesExhaustedError,
    TransportInvalid,
)
from snapaudit.hashing import sha256_json
from snapaudit.progress import Progress
from snapaudit.run.execution.failures import FailureLog
from snapaudit.run.execution.runner import CellTask, RetryPolicy, StageSummary
from snapaudit.run.execution.schedule import derive_seed
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.ledger.batches import BatchMember, BatchRow, NewRequest
from snapaudit.systems.config import RunConfig
from snapaudit.systems.failure import R
from snapaudit.systems.redact import redact
from snapaudit.testbed.generate.batch_api import BatchProvider
from snapaudit.testbed.generate.batch_results import BatchResults

ENDED_REASONS = {"expired": R.BATCH_EXPIRED, "cancelled": R.BATCH_CANCELLED,
                 "failed": R.BATCH_FAILED}


def custom_id(tag: str, stage: str, cell_key: str, attempt_no: int) -> str:
    """One attempt's id inside a batch: ``sa-`` and 40 hex digits (valid for both APIs)."""
    return "sa-" + hashlib.sha256(f"{tag}|{stage}|{cell_key}|{attempt_no}".encode()
                                  ).hexdigest()[:40]


def _gone(batch: BatchRow, provider: BatchProvider, exc: NotFoundError) -> BackendError:
    """A submitted batch its provider no longer knows: every resume would stop here, so the
    message names the way out (``snapaudit run --forget-batch``), which only the user may
    take (a batch under another API key or project also answers 404)."""
    return BackendError(
        f"batch {batch.local_id} ({batch.n_requests} requests of stage {batch.stage}) is "
        f"unknown to {provider.backend} as {batch.provider_batch_id}: {exc}. If it was "
        "deleted at the provider, `snapaudit run PROTOCOL.toml --forget-batch "
        f"{batch.local_id}` ends it here and sends its requests again in a new batch "
        "(billed again if the provider had run them); if the API key or project changed, "
        "restore it and run again")


class BatchDriver:
    def __init__(self, ledger: Ledger, stage: str, tasks: Sequence[CellTask],
                 policy: RetryPolicy, progress: Progress, run: RunConfig):
        self.ledger, self.stage, self.policy, self.progress = ledger, stage, policy, progress
        self.poll_s = run.batch_poll_s
        self.tasks = {t.cell_key: t for t in tasks}
        self.order = [t.cell_key for t in tasks]
        self.tag = ledger.batch_tag()
        self.failures: Counter[str] = Counter()  # per cell, in this invocation
        self.log = FailureLog(stage)  # reasons, last error, fail fast before any success
        self.counts = {"attempts": 0, "invalid": 0, "accepted": 0}
        self.fresh: set[int] = set()  # batches created by this invocation, never sent
        self.api_errors = 0

    def _call(self, key: str) -> tuple[CellTask, BatchProvider]:
        task = self.tasks.get(key)
        if task is None or task.batch is None:
            raise ConfigError(f"{self.stage} cell {key} rides in a batch but is not a cell of "
                              "this stage any more")
        return task, task.batch.provider

    async def run(self) -> StageSummary:
        done = self.ledger.accepted_keys(self.stage)
        before = len(done & set(self.tasks))
        self.log.accepted = len(done)
        self.progress.stage(self.stage, total=len(self.tasks))
        if before:
            self.progress.advance(before)
        try:
            while await self._round():
                pass
        finally:
            providers = {t.batch.provider.key: t.batch.provider
                         for t in self.tasks.values() if t.batch is not None}
            for provider in providers.values():
                await provider.aclose()
        exhausted = [k for k in self.order if self.failures[k] >= self.policy.max_attempts
                     and k not in self.ledger.accepted_keys(self.stage)]
        if exhausted:
            raise RetriesExhaustedError(self.stage, exhausted, dict(self.log.reasons),
                                        self.log.last_error)
        return StageSummary(self.stage, len(self.tasks), before, self.counts["accepted"],
                            self.counts["attempts"], self.counts["invalid"])

    async def _round(self) -> bool:
        """Prepare, send, poll and apply once; False when nothing is left to do."""
        self._prepare()
        batches = self.ledger.batches(self.stage, open_only=True)
        if not batches:
            return False
        ended = 0
        for batch in batches:
            try:
                ended += await self._advance(batch)
            except TransportInvalid as exc:
                self.api_errors += 1
                if self.api_errors >= self.policy.max_attempts:
                    raise BackendError(
                        f"the batch API of {batch.provider} ({batch.endpoint}) failed "
                        f"{self.api_errors} times in a row ({exc.reason}: "
                        f"{redact(exc.detail, self.policy.secrets)[:200]}); its batches are "
                        "kept: run again to "
                        "resume them") from None
                continue
            self.api_errors = 0
        if not ended:
            await asyncio.sleep(self.poll_s)
        return True

    def _prepare(self) -> None:
        riding = {m.cell_key for b in self.ledger.batches(self.stage, open_only=True)
                  for m in self.ledger.batch_members(b.id)}
        accepted = self.ledger.accepted_keys(self.stage)
        groups: dict[str, list[tuple[NewRequest, int]]] = {}
        providers: dict[str, BatchProvider] = {}
        for key in self.order:
            if key in accepted or key in riding or self.failures[key] >= self.policy.max_attempts:
                continue
            task, provider = self._call(key)
            assert task.batch is not None
            n = self.ledger.next_attempt_no(self.stage, key)
            cid = custom_id(self.tag, self.stage, key, n)
            size = len(provider.line(cid, task.batch.build(n, self._seed(key, n))))
            groups.setdefault(provider.key, []).append(
                (NewRequest(key, sha256_json(task.request), n, cid), size))
            providers[provider.key] = provider
        for pkey, entries in groups.items():
            provider = providers[pkey]
            chunk: list[NewRequest] = []
            size = 0
            for req, n_bytes in entries:
                if chunk and (len(chunk) >= provider.max_requests
                              or size + n_bytes > provider.max_bytes):
                    self._create(provider, chunk, size)
                    chunk, size = [], 0
                chunk.append(req)
                size += n_bytes
            if chunk:
                self._create(provider, chunk, size)

    def _create(self, provider: BatchProvider, chunk: list[NewRequest], size: int) -> None:
        row = self.ledger.create_batch(self.stage, provider.backend, provider.endpoint, chunk,
                                       size)
        self.fresh.add(row.id)
        self.counts["attempts"] += len(chunk)

    def _seed(self, key: str, attempt_no: int) -> int:
        index = self.ledger.seed_index(self.stage, key, attempt_no)  # same on a rebuild
        return derive_seed(self.policy.design_seed, self.stage, key, index)

    async def _advance(self, batch: BatchRow) -> int:
        """Send, poll or apply one open batch; 1 when it ended now."""
        members = self.ledger.batch_members(batch.id)
        _, provider = self._call(members[0].cell_key)
        if batch.provider_batch_id is None:
            await self._send(batch, members, provider)
            return 0
        try:
            status = await provider.poll(batch.provider_batch_id)
        except NotFoundError as exc:
            raise _gone(batch, provider, exc) from None
        if status.status != batch.provider_status:
            self.ledger.record_provider_status(batch.id, status.status)
        if not status.ended:
            return 0
        await self._apply(batch, members, provider, status.status)
        return 1

    async def _send(self, batch: BatchRow, members: list[BatchMember],
                    provider: BatchProvider) -> None:
        if batch.id not in self.fresh:  # maybe sent before its id could be recorded
            known = {b.provider_batch_id for b in self.ledger.batches() if b.provider_batch_id}
            found = await provider.find(batch.local_id, batch.n_requests, batch.created_at,
                                        known)
            if found is not None:
                self.ledger.record_provider_id(batch.id, found)
                self.progress.info(f"batch {batch.local_id}: found at the provider as {found}")
                return
        self.fresh.discard(batch.id)  # from here on the provider may know it
        lines = []
        for m in members:
            task, _ = self._call(m.cell_key)
            assert task.batch is not None
            lines.append(provider.line(m.custom_id, task.batch.build(
                m.attempt_no, self._seed(m.cell_key, m.attempt_no))))
        provider_id = await provider.submit(batch.local_id, lines)
        self.ledger.record_provider_id(batch.id, provider_id)
        self.progress.info(f"batch {batch.local_id}: {len(lines)} requests submitted as "
                           f"{provider_id}")

    async def _apply(self, batch: BatchRow, members: list[BatchMember], provider: BatchProvider,
                     status: str) -> None:
        assert batch.provider_batch_id is not None
        failed: list[tuple[str, str, str]] = []
        with BatchResults() as results:  # spooled to disk; gone when this block ends
            try:
                await provider.results(batch.provider_batch_id, results)
            except NotFoundError as exc:
                raise _gone(batch, provider, exc) from None
            # each result is read from disk as its write is made, inside the one transaction
            self.ledger.end_batch(batch.id, status, (
                self._outcome(batch, m, results, status, failed) for m in members))
        accepted = len(members) - len(failed)
        self.counts["accepted"] += accepted
        self.counts["invalid"] += len(failed)
        self.log.accepted += accepted
        for key, reason, detail in failed:  # written first: the batch's results are kept
            self.failures[key] += 1
            fatal = self.log.record(key, reason, detail, self.tasks[key].endpoint)
            if fatal is not None:
                raise FailFastError(self.stage, fatal, self.log.identical, self.log.cells)
        self.progress.advance(accepted)
        self.progress.info(f"batch {batch.local_id} {status}: {accepted} accepted, "
                           f"{len(failed)} to retry")

    def _outcome(self, batch: BatchRow, m: BatchMember, results: BatchResults, status: str,
                 failed: list[tuple[str, str, str]]) -> Callable[[Ledger], None]:
        """The ledger write of one member's result: accepted, or transport-invalid (then
        also appended to ``failed``)."""
        task, provider = self._call(m.cell_key)
        assert task.batch is not None
        seed = self._seed(m.cell_key, m.attempt_no)
        try:
            got = results.get(m.custom_id)
            if got is None:
                raise TransportInvalid(ENDED_REASONS.get(status, R.BATCH_MISSING_RESULT),
                                       detail=f"no result for {m.custom_id} in batch "
                                       f"{batch.provider_batch_id} ({status})")
            if isinstance(got, TransportInvalid):
                raise got
            request = task.batch.build(m.attempt_no, seed)
            cell = task.batch.finish(provider.parse(request, got), m.attempt_no, seed)
        except TransportInvalid as exc:
            detail = redact(exc.detail, self.policy.secrets)[:500]
            failed.append((m.cell_key, exc.reason, detail))
            return partial(Ledger.finish_attempt_op, attempt_id=m.attempt_id,
                           outcome="transport_invalid", reason=exc.reason, error=detail or None)
        meta = {**cell.meta, "batch": batch.local_id,
                "provider_batch_id": batch.provider_batch_id}
        return partial(Ledger.finish_and_accept_op, stage=self.stage, cell_key=m.cell_key,
                       attempt_id=m.attempt_id, payload=cell.payload, usage=cell.usage,
                       latency_s=None, meta=meta)
