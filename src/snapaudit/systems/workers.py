"""``isolation = "process"``: a Python system's calls in a pool of worker processes.

``slots`` workers (``max_concurrency``), each a fresh interpreter started with the
``spawn`` context (:mod:`snapaudit.systems.worker_main`) that imports the target once and
runs ``setup`` once, before its first call and outside every timeout; a worker takes one
call at a time over a pipe. A worker starts when a call first needs it.

* A **native crash** of a worker (``os.abort()``: SIGABRT, a segfault: SIGSEGV, an
  ``exit()``) is one failed attempt, reason ``worker_died``, its detail naming the signal
  (``worker died: SIGABRT (signal 6)``); the worker is replaced and the run goes on (the
  attempt is retried like a timeout: with the same seed, no answer having come back).
* A call past its **timeout** (counted from when it was sent to its worker; waiting for a
  free worker does not count) fails as ``timeout``; its worker is killed and replaced, so no
  call of the target keeps running behind a failed attempt.
* A failing ``setup`` or import in a worker is a :class:`~snapaudit.errors.ConfigError`
  naming it.
* No worker outlives this process: each dies with it, even mid-call
  (:func:`~snapaudit.systems.worker_main.die_with_parent`).

The program that starts a run must be importable by ``spawn``: a script that calls
:func:`snapaudit.audit` keeps it under ``if __name__ == "__main__":``.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from typing import Any

from snapaudit.errors import ConfigError, TransportInvalid
from snapaudit.systems.failure import R
from snapaudit.systems.python_call import PythonCall, Returned
from snapaudit.systems.worker_main import serve

STOP_WAIT_S = 2.0


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """What each worker imports and sets up."""

    target: str
    setup: str | None
    search: str | None
    kwargs: dict[str, Any]
    state: str


class WorkerDied(Exception):
    """A worker's pipe closed: the process is gone; the message says how."""


class Worker:
    """One worker process and the parent's end of its pipe."""

    def __init__(self, spec: WorkerSpec):
        ctx = multiprocessing.get_context("spawn")
        self.conn, child = ctx.Pipe(duplex=True)
        self.proc: BaseProcess = ctx.Process(
            target=serve, args=(child, spec.target, spec.setup, spec.search, spec.kwargs,
                                spec.state, os.getpid()),
            name=f"snapaudit-{spec.state}-worker", daemon=True)
        self.proc.start()
        child.close()

    async def receive(self, timeout_s: float | None) -> Any:
        """The worker's next message (TimeoutError after ``timeout_s``; WorkerDied)."""
        loop = asyncio.get_running_loop()
        ready = loop.create_future()
        fd = self.conn.fileno()
        loop.add_reader(fd, _set, ready)
        try:
            await asyncio.wait_for(ready, timeout_s)
        finally:
            loop.remove_reader(fd)
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            raise WorkerDied(self.death()) from None

    def death(self) -> str:
        """How the process ended, in words."""
        self.proc.join(STOP_WAIT_S)
        return exit_words(self.proc.exitcode)

    def kill(self) -> None:
        if self.proc.is_alive():
            self.proc.kill()
        self.proc.join(STOP_WAIT_S)
        self.conn.close()

    def stop(self) -> None:
        """Ask the worker to stop; kill it if it does not within STOP_WAIT_S."""
        with contextlib.suppress(OSError, ValueError):  # its pipe is already gone
            self.conn.send(("stop",))
        self.proc.join(STOP_WAIT_S)
        self.kill()


def _set(ready: asyncio.Future[None]) -> None:
    if not ready.done():
        ready.set_result(None)


def exit_words(code: int | None) -> str:
    """``worker died: SIGABRT (signal 6)``, ``worker exited with code 3``."""
    if code is None:
        return "worker stopped answering"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = "signal"
        return f"worker died: {name} (signal {-code})"
    return f"worker exited with code {code}"


class WorkerPool:
    """At most ``slots`` workers, each taking one call at a time."""

    def __init__(self, spec: WorkerSpec, slots: int, timeout_s: float):
        self._spec, self._timeout_s = spec, timeout_s
        self._idle: asyncio.Queue[Worker | None] | None = None
        self._slots = slots
        self._all: set[Worker] = set()
        self.started = 0  # workers started so far (replacements included)

    def _queue(self) -> asyncio.Queue[Worker | None]:
        if self._idle is None:  # made in the run's loop; None: a worker not yet started
            self._idle = asyncio.Queue()
            for _ in range(self._slots):
                self._idle.put_nowait(None)
        return self._idle

    async def call(self, call: PythonCall, extra: Mapping[str, Any] | None = None) -> Returned:
        idle = self._queue()
        held = await idle.get()  # what goes back to the queue: a worker, or None
        try:
            if held is None or not held.proc.is_alive():
                if held is not None:
                    self._drop(held)
                held = None
                held = await self._start()
            worker, held = held, None  # in flight: back to the queue only after its reply
            try:
                worker.conn.send(("call", call, dict(extra or {})))
                returned = await worker.receive(self._timeout_s)
            except TimeoutError:
                self._drop(worker)
                raise TransportInvalid(R.TIMEOUT, detail=(
                    f"no return within {self._timeout_s:g} s: the worker (pid "
                    f"{worker.proc.pid}) was killed and is replaced")) from None
            except (WorkerDied, OSError) as exc:
                died = exc if isinstance(exc, WorkerDied) else WorkerDied(worker.death())
                self._drop(worker)
                raise TransportInvalid(R.WORKER_DIED, detail=(
                    f"{died} during the call (a native crash of the target or of a library "
                    "it calls); the worker is replaced")) from None
            except BaseException:  # cancelled mid-call: the worker's state is unknown
                self._drop(worker)
                raise
            held = worker
            assert isinstance(returned, Returned)
            return returned
        finally:
            idle.put_nowait(held)

    async def _start(self) -> Worker:
        """A new worker, imported and set up (no timeout: setup may load a model)."""
        worker = Worker(self._spec)
        self._all.add(worker)
        self.started += 1
        try:
            message = await worker.receive(None)
        except WorkerDied as died:
            self._drop(worker)
            what = (f"importing the target or running setup {self._spec.setup!r}"
                    if self._spec.setup else "importing the target")
            raise ConfigError(
                f"state {self._spec.state}: a worker process ended before it was ready "
                f"({died}) while {what}; a script that starts the run must keep that call "
                "under `if __name__ == \"__main__\":` (isolation = \"process\" starts workers "
                "with spawn)") from None
        if message[0] != "ready":
            self._drop(worker)
            raise ConfigError(f"{message[1]} (in a worker process)")
        return worker

    def _drop(self, worker: Worker) -> None:
        worker.kill()
        self._all.discard(worker)

    async def aclose(self) -> None:
        workers, self._all = list(self._all), set()
        for worker in workers:
            await asyncio.to_thread(worker.stop)

