"""A circuit breaker per endpoint: a stage backs off as a whole when an endpoint is down.

After ``failures`` consecutive transient failures on one endpoint (the one its cells name,
``CellTask.endpoint``; the transient reasons of
:data:`snapaudit.systems.failure.TRANSIENT`, less a Retry-After over the cap) the endpoint's
breaker **opens**: every cell of that endpoint waits, holding its concurrency slot and
without spending an attempt, so no further cell is dispatched into the outage. After
``backoff_s`` (or the server's Retry-After, when longer) one waiting cell makes a single
**probe** attempt (half-open): a success, or any answer that is not a transient failure,
closes the breaker and releases every waiting cell; a transient failure opens it again with
the wait doubled, up to ``backoff_max_s``. A failed probe does not count against the
probing cell's ``max_attempts`` (the outage budget bounds it instead; its attempt row is
marked ``failed_probe`` and ``snapaudit status`` counts it apart), and the probe goes
to the cells in the order they began to wait. When the endpoint has been failing for
``max_wait_s`` since the breaker opened (the last probe is made at that moment) the stage
stops with :class:`~snapaudit.errors.EndpointDownError` naming the endpoint and its last
error (every cell waiting on that breaker stops with it, so none waits for ever). A
success on the endpoint at any time closes its breaker.

A healthy stage never opens a breaker and pays two attribute reads per attempt.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

from snapaudit.errors import EndpointDownError
from snapaudit.systems.config import RunConfig
from snapaudit.systems.failure import R, is_transient


@dataclass(frozen=True, slots=True)
class BreakerPolicy:
    """``[run]`` breaker_failures (0: no breaker), breaker_backoff_s, backoff_max_s (the cap
    of the doubled wait, at least breaker_backoff_s), breaker_max_wait_s."""

    failures: int = 2
    backoff_s: float = 1.0
    backoff_max_s: float = 30.0
    max_wait_s: float = 120.0


def breaker_policy(run: RunConfig) -> BreakerPolicy:
    """The breaker knobs of ``[run]``."""
    return BreakerPolicy(run.breaker_failures, run.breaker_backoff_s, run.backoff_max_s,
                         run.breaker_max_wait_s)


def opens_breaker(reason: str) -> bool:
    """Whether a failure with ``reason`` counts towards opening a breaker."""
    return is_transient(reason) and reason != R.RETRY_AFTER_OVER_CAP


class Breaker:
    """The breaker of one endpoint (see the module docstring)."""

    def __init__(self, stage: str, endpoint: str, policy: BreakerPolicy):
        self.stage = stage
        self.endpoint = endpoint
        self.policy = policy
        self.streak = 0  # consecutive transient failures
        self.open = False
        self.probing = False
        self.since = 0.0  # loop time the breaker opened
        self.wait_s = 0.0
        self.last_error = ""
        self._due = False  # the wait is over and no probe has been handed out
        self._waiters: deque[asyncio.Future[bool]] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self.down: Callable[[], EndpointDownError] | None = None  # the outage budget is spent
        self.stopped = False

    async def admit(self) -> bool:
        """Wait while the breaker is open; True when the caller's attempt is the probe."""
        if not self.open:
            return False
        if self.down is not None:
            raise self.down()
        if self.stopped:
            raise asyncio.CancelledError  # the stage is stopping (another cell's error)
        if self._due and not self.probing and not self._waiters:
            self._due, self.probing = False, True
            return True
        waiter: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        return await waiter

    def succeeded(self, probe: bool) -> None:
        if probe:
            self.probing = False
        self.streak = 0
        if self.open:
            self._close()

    def failed(self, reason: str, retry_after: float | None, probe: bool, error: str) -> None:
        """Count one failed attempt; EndpointDownError when the outage budget is spent."""
        if probe:
            self.probing = False
        if not opens_breaker(reason):  # the service answered: it is up
            self.streak = 0
            if self.open:
                self._close()
            return
        self.streak += 1
        self.last_error = error
        loop = asyncio.get_running_loop()
        now = loop.time()
        if probe:
            if now - self.since >= self.policy.max_wait_s:
                self._give_up(now - self.since)
            self.wait_s = min(max(self.policy.backoff_max_s, self.policy.backoff_s),
                              self.wait_s * 2.0)
            self._schedule(loop, now, retry_after)
        elif not self.open and self.streak >= self.policy.failures:
            self.open, self.since, self.wait_s = True, now, self.policy.backoff_s
            self._schedule(loop, now, retry_after)

    def _give_up(self, waited_s: float) -> None:
        """Every waiting cell, and every cell that comes later, stops with the error too
        (none may wait for a probe that never comes)."""
        def error() -> EndpointDownError:
            return EndpointDownError(self.stage, self.endpoint, waited_s,
                                     self.policy.max_wait_s, self.last_error)

        self.down = error
        waiters = self._release()
        for waiter in waiters:
            if not waiter.done():
                waiter.set_exception(error())
        raise error()

    def stop(self) -> None:
        """The stage stops: cancel every waiting cell, and every cell that comes later."""
        self.stopped = True
        waiters = self._release()
        for waiter in waiters:
            waiter.cancel()

    def _schedule(self, loop: asyncio.AbstractEventLoop, now: float,
                  retry_after: float | None) -> None:
        delay = max(self.wait_s, retry_after or 0.0)
        delay = max(0.0, min(delay, self.since + self.policy.max_wait_s - now))
        self._due = False
        if self._timer is not None:
            self._timer.cancel()
        self._timer = loop.call_later(delay, self._on_due)

    def _on_due(self) -> None:
        self._timer = None
        if not self.open or self.probing:
            return
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():  # a cancelled waiter is skipped
                self.probing = True
                waiter.set_result(True)
                return
        self._due = True  # the next cell to arrive probes

    def _release(self) -> deque[asyncio.Future[bool]]:
        """Cancel the pending probe timer and take every waiting cell off the queue."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        waiters, self._waiters = self._waiters, deque()
        return waiters

    def _close(self) -> None:
        self.open = self._due = False
        waiters = self._release()
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(False)


class Breakers:
    """The breakers of one stage invocation, by endpoint, created on first failure."""

    def __init__(self, stage: str, policy: BreakerPolicy):
        self.stage = stage
        self.policy = policy
        self.by_endpoint: dict[str, Breaker] = {}
        self.active = False  # a failure was seen: successes must reset streaks

    async def admit(self, endpoint: str) -> bool:
        breaker = self.by_endpoint.get(endpoint)
        return False if breaker is None else await breaker.admit()

    def stop(self) -> None:
        """A cell raised: no cell may go on waiting for a probe (the stage is stopping)."""
        for breaker in self.by_endpoint.values():
            breaker.stop()

    def succeeded(self, endpoint: str, probe: bool) -> None:
        breaker = self.by_endpoint.get(endpoint)
        if breaker is not None:
            breaker.succeeded(probe)

    def failed(self, endpoint: str, reason: str, retry_after: float | None, probe: bool,
               error: str) -> None:
        if self.policy.failures <= 0:
            return
        breaker = self.by_endpoint.get(endpoint)
        if breaker is None:
            breaker = self.by_endpoint[endpoint] = Breaker(self.stage, endpoint, self.policy)
        self.active = True
        breaker.failed(reason, retry_after, probe, error)
