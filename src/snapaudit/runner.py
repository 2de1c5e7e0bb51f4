"""Run the cells of one stage: durable attempt, call, outcome, retry with backoff.

For each cell not yet accepted, in the order given (the schedule order): acquire a slot
(bounded concurrency), take a rate-limit token, commit an attempt row, make the call, then
either accept the payload (attempt and cell in one transaction) or record the
transport-invalid outcome and retry after ``min(backoff_max, base * 2**(n-1))`` seconds, or
the server's ``Retry-After`` when that is longer. Cells still failing after
``max_attempts`` attempts in this invocation are raised together as
:class:`RetriesExhaustedError` once every other cell has finished.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from snapaudit.errors import RetriesExhaustedError, TransportInvalid
from snapaudit.hashing import sha256_json
from snapaudit.ledger import Ledger
from snapaudit.progress import Progress
from snapaudit.schedule import derive_seed
from snapaudit.transport import TokenBucket


@dataclass(frozen=True, slots=True)
class CellResult:
    """What one successful call returns: the payload to accept, usage and latency."""

    payload: dict[str, Any]
    usage: dict[str, int] = field(default_factory=dict)
    latency_s: float | None = None


@dataclass(frozen=True, slots=True)
class CellTask:
    """One cell: its key, its secret-free request (hashed into the attempt row), and the call.

    ``call(attempt_no, seed)`` makes exactly one attempt and raises TransportInvalid on a
    retryable failure.
    """

    cell_key: str
    request: dict[str, Any]
    call: Callable[[int, int], Awaitable[CellResult]]


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    concurrency: int = 16
    rate_limit_per_s: float | None = None
    max_attempts: int = 5
    backoff_base_s: float = 0.5
    backoff_max_s: float = 30.0
    design_seed: int = 0

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
    done = ledger.accepted_keys(stage)
    todo = [t for t in tasks if t.cell_key not in done]
    progress.stage(stage, total=len(tasks))
    if len(tasks) > len(todo):
        progress.advance(len(tasks) - len(todo))
    sem = asyncio.Semaphore(policy.concurrency)
    bucket = TokenBucket(policy.rate_limit_per_s)
    counts = {"attempts": 0, "invalid": 0, "accepted": 0}
    exhausted: list[str] = []

    failed: list[BaseException] = []

    async def one(task: CellTask) -> None:
        try:
            ok = await _drive(ledger, stage, task, policy, bucket, sem, counts)
        except BaseException as exc:
            failed.append(exc)
            raise
        finally:
            sem.release()
        if ok:
            progress.advance(1)
        else:
            exhausted.append(task.cell_key)

    running: list[asyncio.Task[None]] = []
    try:
        for task in todo:  # dispatch in schedule order
            await sem.acquire()
            if failed:
                sem.release()
                break
            t = asyncio.create_task(one(task))
            running.append(t)
        results = await asyncio.gather(*running, return_exceptions=True)
        for r in results:
            if isinstance(r, BaseException):
                raise r
    finally:
        for t in running:
            t.cancel()
    if exhausted:
        order = {t.cell_key: i for i, t in enumerate(tasks)}
        raise RetriesExhaustedError(stage, sorted(exhausted, key=order.__getitem__))
    return StageSummary(stage, len(tasks), len(tasks) - len(todo), counts["accepted"],
                        counts["attempts"], counts["invalid"])


async def _drive(
    ledger: Ledger,
    stage: str,
    task: CellTask,
    policy: RetryPolicy,
    bucket: TokenBucket,
    sem: asyncio.Semaphore,
    counts: dict[str, int],
) -> bool:
    """Attempts for one cell (holding a slot except while backing off); True once accepted."""
    request_hash = sha256_json(task.request)
    retry_after: float | None = None
    for failures in range(policy.max_attempts):
        if failures:
            sem.release()
            await asyncio.sleep(policy.backoff(failures, retry_after))
            await sem.acquire()
        await bucket.acquire()
        attempt_id = ledger.begin_attempt(stage, task.cell_key, request_hash)
        attempt_no = ledger.attempt_no(attempt_id)
        seed = derive_seed(policy.design_seed, stage, task.cell_key, attempt_no)
        counts["attempts"] += 1
        start = time.monotonic()
        try:
            result = await task.call(attempt_no, seed)
        except TransportInvalid as exc:
            counts["invalid"] += 1
            ledger.finish_attempt(attempt_id, "transport_invalid", reason=exc.reason,
                                  error=exc.detail[:500] or None,
                                  latency_s=time.monotonic() - start)
            retry_after = exc.retry_after
            continue
        except Exception as exc:
            ledger.finish_attempt(attempt_id, "error", reason=type(exc).__name__,
                                  error=str(exc)[:500], latency_s=time.monotonic() - start)
            raise
        latency = result.latency_s if result.latency_s is not None else time.monotonic() - start
        ledger.finish_and_accept(stage, task.cell_key, attempt_id, result.payload,
                                 usage=result.usage, latency_s=latency)
        counts["accepted"] += 1
        return True
    return False
