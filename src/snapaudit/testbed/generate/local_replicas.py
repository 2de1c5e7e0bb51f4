"""Replicas of the embedded model: one worker thread and one llama.cpp instance each.

llama.cpp releases the GIL inside its ctypes calls, so replicas in threads of one process
decode in parallel (one ``Llama`` must never be called from two threads at once: it aborts).
Each replica runs its calls one at a time on its own daemon thread, so the event loop
never blocks and a call abandoned by Ctrl-C never holds the process.

Calls are queued. A free replica takes the oldest queued call whose prompt it holds (its
whole-prompt state is saved there, or its first call is running there), else the oldest
queued call whose prompt no replica holds; a call whose prompt another replica holds waits
for that replica, where it costs only its decode instead of a second prefill. A call's
answer depends on its prompt and seed only (every call starts from a saved state of
identical bytes), never on which replica ran it or when.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Hashable
from typing import Any

from snapaudit.errors import BackendError
from snapaudit.testbed.generate.local_model import LocalModel


class _Job:
    __slots__ = ("fn", "fut", "key")

    def __init__(self, key: Hashable, fn: Callable[[LocalModel], Any],
                 fut: asyncio.Future[Any]) -> None:
        self.key, self.fn, self.fut = key, fn, fut


class LocalReplicas:
    """The worker threads over ``models`` (one each) and the queue of calls (module doc)."""

    def __init__(self, models: list[LocalModel]) -> None:
        if not models:
            raise ValueError("need at least one replica")
        self.models = models
        # a call waits for the replica holding its prompt only where states are kept
        self._sticky = any(m.prompts.budget > 0 for m in models)
        self._cond = threading.Condition()
        self._queue: list[_Job] = []
        self._owner: dict[Hashable, int] = {}
        self._running = 0
        self._alive = 0
        self._started = False
        self._closed = False
        self._exited: asyncio.Future[None] | None = None

    def submit(self, loop: asyncio.AbstractEventLoop, key: Hashable,
               fn: Callable[[LocalModel], Any]) -> asyncio.Future[Any]:
        """Queue ``fn(model)`` of a call whose prompt is ``key``; its result's future."""
        fut: asyncio.Future[Any] = loop.create_future()
        with self._cond:
            if self._closed:
                raise BackendError("the local generator is closed")
            if not self._started:
                self._start()
            self._queue.append(_Job(key, fn, fut))
            self._cond.notify_all()
        return fut

    def _start(self) -> None:
        self._started = True
        for i in range(len(self.models)):
            self._alive += 1
            # one name for all: the CLI exits at once past a call abandoned by Ctrl-C
            # (snapaudit.cli._exit_now_if_a_model_call_was_abandoned looks for it)
            threading.Thread(target=self._work, args=(i,), name="snapaudit-llm",
                             daemon=True).start()

    def _work(self, i: int) -> None:
        model = self.models[i]
        while (job := self._next(i)) is not None:
            outcome: tuple[bool, Any] | None = None
            if not job.fut.cancelled():  # its caller went away before it started
                try:
                    outcome = True, job.fn(model)
                except BaseException as exc:  # handed to the awaiting coroutine
                    outcome = False, exc
            with self._cond:
                self._running -= 1
                for key in [k for k, o in self._owner.items() if o == i and not model.holds(k)]:
                    del self._owner[key]  # evicted (or never saved): any replica may take it
                self._cond.notify_all()
            # settled only once the call no longer counts as running: a caller that closes
            # the pool on its last answer then waits for every model to close
            if outcome is not None:
                with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits
                    job.fut.get_loop().call_soon_threadsafe(_settle, job.fut, *outcome)
        model.close()
        with self._cond:
            self._alive -= 1
            exited = self._exited if self._alive == 0 else None
        if exited is not None:
            with contextlib.suppress(RuntimeError):
                exited.get_loop().call_soon_threadsafe(_settle, exited, True, None)

    def _next(self, i: int) -> _Job | None:
        """The next call for replica ``i`` (waiting for one); None once closed."""
        with self._cond:
            while not self._closed:
                job = self._take(i)
                if job is not None:
                    self._running += 1
                    return job
                self._cond.wait()
            return None

    def _take(self, i: int) -> _Job | None:
        pick = None
        for n, job in enumerate(self._queue):
            owner = self._owner.get(job.key)
            if owner == i:
                pick = n
                break
            if owner is None and pick is None:
                pick = n
        if pick is None:
            return None
        job = self._queue.pop(pick)
        if self._sticky:
            self._owner[job.key] = i
        return job

    async def aclose(self) -> None:
        """Stop taking calls and close every model; a call still running (Ctrl-C) is not
        waited for (its replica closes its model after it)."""
        loop = asyncio.get_running_loop()
        with self._cond:
            if self._closed:
                return
            self._closed = True
            dropped, self._queue = self._queue, []
            busy = self._running > 0
            exited = self._exited = loop.create_future() if self._alive else None
            self._cond.notify_all()
        for job in dropped:
            with contextlib.suppress(RuntimeError):
                job.fut.get_loop().call_soon_threadsafe(job.fut.cancel)
        if exited is not None and not busy:
            await exited


def _settle(fut: asyncio.Future[Any], ok: bool, value: Any) -> None:
    if fut.done():  # cancelled: the caller went away
        return
    if ok:
        fut.set_result(value)
    else:
        fut.set_exception(value)
