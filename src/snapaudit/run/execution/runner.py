"""Run the cells of one stage: durable attempt, call, outcome, retry with backoff.

For each cell not yet accepted, in the order given (the schedule order): acquire a slot
(bounded concurrency), take a rate-limit token, commit an attempt row, make the call, then
either accept the payload (attempt and cell in one transaction) or record the
transport-invalid outcome and retry after ``min(backoff_max, base * 2**(n-1))`` seconds, or
the server's ``Retry-After`` when that is longer. A ``Retry-After`` longer than
``max_retry_after_s`` is not waited for: the attempt is recorded with reason
``retry_after_over_cap`` and the cell is not retried in this invocation. Cells still failing
after ``max_attempts`` attempts in this invocation are raised together as
:class:`RetriesExhaustedError` (with the failure reasons by count and the last error per
endpoint) once every other cell has finished. A stage whose failures, retries included,
are all one identical error stops early (:mod:`snapaudit.run.execution.failures`); until the stage's
first success a cell backing off keeps its slot. An endpoint failing transiently opens its
circuit breaker (:mod:`snapaudit.run.execution.breaker`): its cells wait, holding their slots, for
one probe attempt. On any exit (an error, a
cancellation, Ctrl-C) the group committer finishes its batch in flight and every attempt
left without an outcome is marked ``interrupted`` before ``run_cells`` returns.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from snapaudit.errors import FailFastError, RetriesExhaustedError, TransportInvalid
from snapaudit.hashing import sha256_json
from snapaudit.progress import Progress
from snapaudit.run.execution.breaker import BreakerPolicy, Breakers, opens_breaker
from snapaudit.run.execution.committer import GroupCommitter
from snapaudit.run.execution.failures import FailureLog, describe
from snapaudit.run.execution.gcpacing import paced_gc as paced_gc  # re-exported (tests, benches)
from snapaudit.run.execution.gcpacing import stage_gc
from snapaudit.run.execution.schedule import derive_seed
from snapaudit.run.record.ledger import FAILED_PROBE, Ledger
from snapaudit.systems.failure import FailureReason, R
from snapaudit.systems.redact import redact
from snapaudit.systems.transport import TokenBucket
from snapaudit.testbed.generate.base import GenerationRequest, GenerationResult
from snapaudit.testbed.generate.batch_api import BatchProvider


@dataclass(frozen=True, slots=True)
class CellResult:
    """What one successful call returns: the payload to accept, usage and latency."""

    payload: dict[str, Any]
    usage: dict[str, int] = field(default_factory=dict)
    latency_s: float | None = None
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CellTask:
    """One cell: its key, its secret-free request (hashed into the attempt row), and the call.

    ``call(attempt_no, seed)`` makes exactly one attempt and raises TransportInvalid on a
    retryable failure. ``endpoint``: what it calls, for the circuit breakers and the last
    error per endpoint (None: the stage's one endpoint); the runner never reads the key.
    """

    cell_key: str
    request: dict[str, Any]
    call: Callable[[int, int], Awaitable[CellResult]]
    batch: BatchCall | None = None  # the same cell through a provider batch (run.batch)
    endpoint: str | None = None


@dataclass(frozen=True, slots=True)
class BatchCall:
    """A cell as one request of a provider batch: ``build(attempt_no, seed)`` is the request
    (deterministic: rebuilt on resume), ``finish(result, attempt_no, seed)`` the payload
    (TransportInvalid for an unusable reply, like ``call``)."""

    provider: BatchProvider
    build: Callable[[int, int], GenerationRequest]
    finish: Callable[[GenerationResult, int, int], CellResult]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    concurrency: int = 16
    rate_limit_per_s: float | None = None
    max_attempts: int = 5
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    design_seed: int = 0
    max_retry_after_s: float = 300.0
    breaker: BreakerPolicy = field(default_factory=BreakerPolicy)
    # the run's secrets (RunResources.secrets): masked in every error recorded or shown
    secrets: Iterable[str] = ()

    def backoff(self, failures: int, retry_after: float | None) -> float:
        delay = min(self.backoff_max_s, self.backoff_base_s * 2.0 ** (failures - 1))
        return max(delay, retry_after or 0.0)


@dataclass(frozen=True, slots=True)
class StageSummary:
    stage: str
    planned: int
    already_accepted: int
    accepted_now: int
    attempts: int
    invalid: int


async def run_cells(
    ledger: Ledger,
    stage: str,
    tasks: Sequence[CellTask],
    policy: RetryPolicy,
    progress: Progress,
) -> StageSummary:
    """Drive every not-yet-accepted task of ``stage`` to acceptance (see module doc)."""
    with stage_gc():  # the collector is paced only when the application asked
        return await _run_cells(ledger, stage, tasks, policy, progress)


async def _run_cells(
    ledger: Ledger,
    stage: str,
    tasks: Sequence[CellTask],
    policy: RetryPolicy,
    progress: Progress,
) -> StageSummary:
    done = ledger.accepted_keys(stage)
    todo = [t for t in tasks if t.cell_key not in done]
    progress.stage(stage, total=len(tasks))
    if len(tasks) > len(todo):
        progress.advance(len(tasks) - len(todo))
    sem = asyncio.Semaphore(policy.concurrency)
    bucket = TokenBucket(policy.rate_limit_per_s)
    counts = {"attempts": 0, "invalid": 0, "accepted": 0}
    exhausted: list[str] = []
    # fail fast before any success, once retries failed too
    log = FailureLog(stage, accepted=len(tasks) - len(todo), after_retries=True)
    breakers = Breakers(stage, policy.breaker)

    failed: list[BaseException] = []
    writer = GroupCommitter(ledger)

    async def one(task: CellTask) -> None:
        try:
            ok = await _drive(writer, stage, task, policy, bucket, sem, counts, log, breakers)
        except BaseException as exc:
            failed.append(exc)
            breakers.stop()  # cells waiting on an open breaker stop too
            raise
        finally:
            sem.release()
        if ok:
            progress.advance(1)
        else:
            exhausted.append(task.cell_key)

    # dispatch order; a task that succeeded leaves at once (100,000 finished tasks kept
    # to the end made every full garbage collection slower)
    running: dict[asyncio.Task[None], None] = {}

    def finished(t: asyncio.Task[None]) -> None:
        if not t.cancelled() and t.exception() is None:
            del running[t]

    try:
        for task in todo:  # dispatch in schedule order
            await sem.acquire()
            if failed:
                sem.release()
                break
            t = asyncio.create_task(one(task))
            running[t] = None
            t.add_done_callback(finished)
        if running:  # the first error stops the stage; the others are cancelled below
            ended, _ = await asyncio.wait(running, return_when=asyncio.FIRST_EXCEPTION)
            for t in running:
                error = t.exception() if t in ended and not t.cancelled() else None
                if error is not None:
                    raise error
    finally:
        for t in running:
            t.cancel()
        await asyncio.gather(*running, return_exceptions=True)
        try:
            await writer.aclose()
        finally:
            ledger.interrupt_unfinished()  # no call of this stage is still in flight
    if exhausted:
        order = {t.cell_key: i for i, t in enumerate(tasks)}
        raise RetriesExhaustedError(stage, sorted(exhausted, key=order.__getitem__),
                                    dict(log.reasons), log.last_error)
    return StageSummary(stage, len(tasks), len(tasks) - len(todo), counts["accepted"],
                        counts["attempts"], counts["invalid"])


async def _drive(
    writer: GroupCommitter,
    stage: str,
    task: CellTask,
    policy: RetryPolicy,
    bucket: TokenBucket,
    sem: asyncio.Semaphore,
    counts: dict[str, int],
    log: FailureLog,
    breakers: Breakers,
) -> bool:
    """Attempts for one cell (holding a slot except while backing off after the stage's
    first success); True once accepted. A failed breaker probe is not one of the cell's
    ``max_attempts``."""
    request_hash = sha256_json(task.request)
    retry_after: float | None = None
    key, endpoint = task.cell_key, task.endpoint or stage
    failures, probe_failed = 0, False
    while failures < policy.max_attempts:
        if failures and not probe_failed:
            if log.accepted:
                sem.release()
                await asyncio.sleep(policy.backoff(failures, retry_after))
                await sem.acquire()
            else:  # nothing accepted yet: the retry comes before another cell is sent
                await asyncio.sleep(policy.backoff(failures, retry_after))
        probe = await breakers.admit(endpoint) if breakers.active else False
        probe_failed = False
        await bucket.acquire()
        attempt_id, attempt_no, seed_index = await writer.call(
            partial(_begin, stage=stage, key=key, request_hash=request_hash))
        seed = derive_seed(policy.design_seed, stage, key, seed_index)
        counts["attempts"] += 1
        start = time.monotonic()
        try:
            result = await task.call(attempt_no, seed)
        except TransportInvalid as exc:
            counts["invalid"] += 1
            failure, retry_after = _Failure.of(exc, policy, probe), exc.retry_after
            await writer.call(partial(
                Ledger.finish_attempt_op, attempt_id=attempt_id, outcome="transport_invalid",
                reason=failure.reason, error=failure.detail or None,
                latency_s=time.monotonic() - start, meta=failure.meta(exc)))
            shown = failure.detail or redact(exc.body, policy.secrets)[:500]
            breakers.failed(endpoint, failure.reason, retry_after, probe,
                            describe(failure.reason, shown))
            fatal = log.record(key, failure.reason, shown, endpoint)
            if fatal is not None:
                raise FailFastError(stage, fatal, log.identical, log.cells) from None
            if failure.over_cap:
                return False
            probe_failed = failure.probe
            if not probe_failed:
                failures += 1
            continue
        except Exception as exc:
            await writer.call(partial(
                Ledger.finish_attempt_op, attempt_id=attempt_id, outcome="error",
                reason=type(exc).__name__, error=redact(str(exc), policy.secrets)[:500],
                latency_s=time.monotonic() - start))
            raise
        latency = result.latency_s if result.latency_s is not None else time.monotonic() - start
        await writer.call(partial(
            Ledger.finish_and_accept_op, stage=stage, cell_key=key, attempt_id=attempt_id,
            payload=result.payload, usage=result.usage, latency_s=latency,
            meta=result.meta or None))
        if breakers.active:
            breakers.succeeded(endpoint, probe)
        counts["accepted"] += 1
        log.accepted += 1
        return True
    return False


@dataclass(frozen=True, slots=True)
class _Failure:
    """One transport-invalid attempt as the ledger records it."""

    reason: FailureReason
    detail: str
    over_cap: bool  # a Retry-After past max_retry_after_s: not retried in this invocation
    probe: bool  # a failed breaker probe: not one of the cell's max_attempts (marked so)

    @classmethod
    def of(cls, exc: TransportInvalid, policy: RetryPolicy, probe: bool) -> _Failure:
        reason, detail, wait = exc.reason, redact(exc.detail, policy.secrets)[:500], \
            exc.retry_after
        over_cap = wait is not None and wait > policy.max_retry_after_s
        if over_cap:
            detail = (f"{reason}: the server asked to wait {wait:g} s (Retry-After), over "
                      f"run.max_retry_after_s = {policy.max_retry_after_s:g}; not retried in "
                      "this run")
            reason = R.RETRY_AFTER_OVER_CAP
        return cls(reason, detail, over_cap, probe and opens_breaker(reason))

    def meta(self, exc: TransportInvalid) -> dict[str, Any] | None:
        """The attempt's meta: a Python system's traceback; the failed-probe mark."""
        meta: dict[str, Any] = {"traceback": exc.traceback} if exc.traceback else {}
        if self.probe:
            meta[FAILED_PROBE] = True
        return meta or None


def _begin(ledger: Ledger, stage: str, key: str, request_hash: str) -> tuple[int, int, int]:
    """Begin an attempt: ``(attempt id, attempt number, seed index)`` (Ledger.seed_index:
    the seed advances only after an attempt that got a response)."""
    attempt_id, attempt_no = ledger.begin_numbered_attempt_op(stage, key, request_hash)
    return attempt_id, attempt_no, ledger.seed_index(stage, key, attempt_no)
