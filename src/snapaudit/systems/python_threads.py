"""``isolation = "thread"``: a Python system's calls in this process.

* **Sync targets** (:class:`ThreadSlots`) run in a thread each, in at most ``slots`` at once.
  The slots belong to the callable, not to the state: every state whose target is the same
  function, lives in the same module or reaches a local module another one reaches shares
  one :class:`ThreadSlots` (:mod:`snapaudit.systems.python_slots`), so a model two states
  share is never entered twice at once unless the target says ``thread_safe``. The timeout
  counts from the call's start in its slot (waiting for a slot does not count). A Python
  thread cannot be stopped: a call past its timeout is *abandoned*: the attempt fails (its
  detail says how many abandoned calls still run) and the call keeps its slot until it
  really returns, so the target is never called more often at once than ``slots``. A retry
  of a cell waits for its abandoned attempt to return (at most one more ``timeout_s``; after
  that the retry fails without a call). When every slot has been held by an abandoned call
  for another ``timeout_s``, the stage stops (:class:`~snapaudit.errors.BackendError`) and
  says to use ``isolation = "process"``, where a hanging call's worker is killed.
* **Async targets** (:class:`AsyncCalls`) run on the event loop, at most ``slots`` calls of
  the state at once, watched by a :class:`~snapaudit.systems.loop_watch.LoopWatch`: a call
  that held the loop past its timeout fails as a timeout (a blocked loop cannot fire one),
  naming the fix.

``setup`` runs once per system, before the first call and outside every timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import Any

from snapaudit.errors import BackendError, TransportInvalid
from snapaudit.systems.failure import R
from snapaudit.systems.loop_watch import BLOCKED_S, LoopWatch
from snapaudit.systems.python_call import PythonCall, Returned, arun_setup, call_async, call_sync


def fix(states: Sequence[str]) -> str:
    """What to set when calls of ``states`` hang."""
    tables = " and ".join(f"[systems.{s}]" for s in states)
    return f'isolation = "process" in {tables} (a worker process per slot, killed at the timeout)'


def who(states: Sequence[str]) -> str:
    """``state old``, or ``states old, new (one target: their slots are shared)``."""
    if len(states) == 1:
        return f"state {states[0]}"
    return f"states {', '.join(states)} (one target: their slots are shared)"


class SetupOnce:
    """The target's kwargs, with ``resources`` = what ``setup`` returned (run once)."""

    def __init__(self, setup: str | None, search: Path | None, state: str,
                 kwargs: Mapping[str, Any]):
        self._setup, self._search, self._state = setup, search, state
        self._base = dict(kwargs)
        self._kwargs: dict[str, Any] | None = None if setup else self._base
        self._lock: asyncio.Lock | None = None

    async def kwargs(self, extra: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The call's kwargs: the state's, ``resources`` (with a setup), then ``extra`` (the
        evidence ``snapaudit attribute`` gives)."""
        base = await self._ready()
        return {**base, **extra} if extra else base

    async def _ready(self) -> dict[str, Any]:
        if self._kwargs is not None:
            return self._kwargs
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._kwargs is None and self._setup is not None:
                resources = await arun_setup(self._setup, self._search, self._state)
                self._kwargs = {**self._base, "resources": resources}
        assert self._kwargs is not None
        return self._kwargs


def _cell(call: PythonCall) -> tuple[str, str, int]:
    return call.question_id, call.state, call.repeat


THREAD_PREFIX = "snapaudit-python-"  # the threads' names: the CLI exits at once past one


class DaemonThreads:
    """``size`` daemon threads taking jobs in order: an abandoned call never holds the
    interpreter's exit (a ThreadPoolExecutor's threads are joined at exit)."""

    def __init__(self, size: int, name: str):
        self._size, self._name = size, name
        self._jobs: queue.SimpleQueue[tuple[Future[Any], Callable[..., Any], tuple[Any, ...]]
                                      | None] = queue.SimpleQueue()
        self._threads: list[threading.Thread] = []

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        future: Future[Any] = Future()
        self._jobs.put((future, fn, args))
        self._threads = [t for t in self._threads if t.is_alive()]
        if len(self._threads) < self._size:
            thread = threading.Thread(target=self._work, name=self._name, daemon=True)
            thread.start()
            self._threads.append(thread)
        return future

    def _work(self) -> None:
        while (job := self._jobs.get()) is not None:
            future, fn, args = job
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args))
                except BaseException as exc:  # handed to the waiting call
                    future.set_exception(exc)

    def shutdown(self) -> None:
        for _ in self._threads:
            self._jobs.put(None)
        self._threads = []


class ThreadSlots:
    """At most ``slots`` calls of a sync target at once, shared by ``states`` (see the
    module doc)."""

    def __init__(self, slots: int, timeout_s: float, states: Sequence[str]):
        self._slots, self._timeout_s, self.states = slots, timeout_s, tuple(states)
        self._pool = DaemonThreads(slots, f"{THREAD_PREFIX}{'-'.join(self.states)}")
        self._free = asyncio.Semaphore(slots)
        self._running: dict[tuple[str, str, int], Future[Returned]] = {}
        self._abandoned: dict[Future[Returned], float] = {}  # call -> when it was abandoned

    async def call(self, fn: Callable[..., Any], call: PythonCall, kwargs: Mapping[str, Any],
                   search: Path | None = None) -> Returned:
        earlier = self._running.get(_cell(call))
        if earlier is not None and not earlier.done():
            await self._wait_for(earlier)
        await self._acquire()
        loop = asyncio.get_running_loop()
        future = self._pool.submit(call_sync, fn, call, kwargs, search)
        future.add_done_callback(lambda f: _soon(loop, self._returned, f))
        self._running[_cell(call)] = future
        try:
            return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(future)),
                                          self._timeout_s)
        except TimeoutError:
            if not future.done():  # else it returned just now: its slot is being freed
                self._abandoned[future] = time.monotonic()
            raise TransportInvalid(R.TIMEOUT, detail=(
                f"no return within {self._timeout_s:g} s; the call was abandoned and keeps its "
                f"slot until it returns ({self._still_running()}; a Python thread cannot be "
                "stopped: set " + fix(self.states) + ")")) from None

    def _still_running(self) -> str:
        return (f"{len(self._abandoned)} abandoned call(s) of {who(self.states)} still "
                f"running, {self._slots} slot(s)")

    def _returned(self, future: Future[Returned]) -> None:
        self._abandoned.pop(future, None)
        for key, running in list(self._running.items()):
            if running is future:
                del self._running[key]
        self._free.release()

    async def _wait_for(self, earlier: Future[Returned]) -> None:
        """A retry waits for its cell's abandoned attempt (never two of one cell at once)."""
        try:
            await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(earlier)),
                                   self._timeout_s)
        except TimeoutError:
            raise TransportInvalid(R.TIMEOUT, detail=(
                "not called: the earlier attempt of this cell, abandoned after "
                f"{self._timeout_s:g} s, is still running ({self._still_running()}; set "
                + fix(self.states) + ")")) from None

    async def _acquire(self) -> None:
        """A free slot (no timeout: waiting does not count); the stage stops once every slot
        has been held by an abandoned call for another ``timeout_s``."""
        while True:
            try:
                await asyncio.wait_for(self._free.acquire(), self._timeout_s)
                return
            except TimeoutError:
                now = time.monotonic()
                if (len(self._abandoned) >= self._slots
                        and max(self._abandoned.values()) <= now - self._timeout_s):
                    oldest = now - min(self._abandoned.values()) + self._timeout_s
                    raise BackendError(
                        f"{who(self.states)}: every one of the {self._slots} slot(s) is held "
                        f"by a call abandoned after timeout_s = {self._timeout_s:g} s that is "
                        f"still running (the oldest for {oldest:.0f} s): a Python thread cannot "
                        "be stopped and no other call can start. Set " + fix(self.states)
                        + ", or raise [run] timeout_s if the calls are only slow.") from None

    def shutdown(self) -> None:
        self._pool.shutdown()


class SyncCalls:
    """One state's calls of a sync target, through the :class:`ThreadSlots` it shares
    (``slots()``: looked up at the first call, once every system of the run is built)."""

    def __init__(self, fn: Callable[..., Any], setup: SetupOnce, search: Path | None,
                 slots: Callable[[], ThreadSlots], close: Callable[[], None]):
        self._fn, self._setup, self._search = fn, setup, search
        self._slots, self._close = slots, close

    async def call(self, call: PythonCall, extra: Mapping[str, Any] | None = None) -> Returned:
        kwargs = await self._setup.kwargs(extra)
        return await self._slots().call(self._fn, call, kwargs, self._search)

    async def aclose(self) -> None:
        self._close()


def _soon(loop: asyncio.AbstractEventLoop, fn: Callable[[Future[Returned]], None],
          future: Future[Returned]) -> None:
    with contextlib.suppress(RuntimeError):  # the run's loop closed while it still ran
        loop.call_soon_threadsafe(fn, future)


class AsyncCalls:
    """An async target on the event loop, at most ``slots`` calls at once, watched."""

    def __init__(self, fn: Callable[..., Any], setup: SetupOnce, slots: int, timeout_s: float,
                 state: str, search: Path | None = None):
        self._fn, self._setup, self._timeout_s, self._state = fn, setup, timeout_s, state
        self._search = search
        self._slots = asyncio.Semaphore(slots)
        self.watch = LoopWatch()

    async def call(self, call: PythonCall, extra: Mapping[str, Any] | None = None) -> Returned:
        kwargs = await self._setup.kwargs(extra)
        async with self._slots:
            self.watch.start()
            start = time.monotonic()
            try:
                returned = await asyncio.wait_for(
                    call_async(self._fn, call, kwargs, self._search), self._timeout_s)
            except TimeoutError:
                blocked = self.watch.blocked_during(start, time.monotonic())
                raise TransportInvalid(R.TIMEOUT, detail=f"no return within "
                                       f"{self._timeout_s:g} s" + self._blocking(blocked)) \
                    from None
            blocked = self.watch.blocked_during(start, time.monotonic())
            if returned.latency_s > self._timeout_s:  # the loop was held: no timer could fire
                raise TransportInvalid(R.TIMEOUT, detail=(
                    f"returned after {returned.latency_s:.1f} s, over timeout_s = "
                    f"{self._timeout_s:g} s" + self._blocking(blocked)))
            return replace(returned, blocked_s=blocked) if blocked > BLOCKED_S else returned

    def _blocking(self, blocked: float) -> str:
        if blocked <= BLOCKED_S:
            return ""
        return (f"; the event loop was blocked for {blocked:.1f} s during this call (an async "
                "target that blocks: no timeout can fire and no other call runs meanwhile): "
                + blocking_fix(self._state))

    async def aclose(self) -> None:
        await self.watch.aclose()


def blocking_fix(state: str) -> str:
    """What to do about an ``async def`` target that blocks the loop."""
    return (f'set isolation = "process" in [systems.{state}] or make the target sync, or '
            "use a real async client (an async def target must await, never block)")
