"""A loop-lag watchdog: a small task that sleeps :data:`TICK_S` at a time and notes each time
it woke up late, i.e. something held the event loop.

An ``async def`` target that calls blocking code (``time.sleep``, a sync HTTP client, a
model's sync ``complete`` inside ``acomplete``) stops the whole loop: no other call makes
progress and no timeout can fire until it returns. :meth:`LoopWatch.blocked_during` says how
long the loop was held during one call (a stall still going on included), so the Python
system can name the blocking target, fail a call whose stall ran past its timeout, and warn
about one that blocked for more than :data:`BLOCKED_S`.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque

TICK_S = 0.05
BLOCKED_S = 1.0  # a stall longer than this is reported


class LoopWatch:
    """Loop stalls longer than ``TICK_S``, the last 256 of them, while calls are running."""

    def __init__(self) -> None:
        self._task: asyncio.Task[None] | None = None
        self._last_tick: float | None = None
        self._stalls: deque[tuple[float, float]] = deque(maxlen=256)  # (from, to)

    def start(self) -> None:
        """Watch the running loop (once; again after a loop of an earlier run closed)."""
        loop = asyncio.get_running_loop()
        if self._task is not None and not self._task.done() and self._task.get_loop() is loop:
            return
        self._last_tick = time.monotonic()
        self._task = loop.create_task(self._watch(), name="snapaudit-loop-watch")

    async def _watch(self) -> None:
        while True:
            before = time.monotonic()
            await asyncio.sleep(TICK_S)
            now = time.monotonic()
            if now - before > 2 * TICK_S:
                self._stalls.append((before + TICK_S, now))
            self._last_tick = now

    def blocked_during(self, start: float, end: float) -> float:
        """The longest time the loop was held within ``[start, end]`` (seconds)."""
        spans = list(self._stalls)
        if self._last_tick is not None:  # a stall the watchdog has not woken up from yet
            spans.append((self._last_tick + TICK_S, time.monotonic()))
        return max([min(to, end) - max(since, start) for since, to in spans] + [0.0])

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None and not task.done() and task.get_loop() is _running_loop():
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
