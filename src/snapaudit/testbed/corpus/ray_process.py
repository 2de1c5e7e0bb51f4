"""Ray tasks driven from a process of their own, so that a build never waits for Ray to start.

Starting a local Ray instance takes seconds (2.4-5 s on 2 cores), the first tasks on its
fresh workers most of another second, and a build that did this in its own process waited for
all of it before ingesting a document. :class:`RayProcessEngine` instead starts a *Ray driver
process* (``python -c "...ray_process import serve; serve()"``) at once and goes on ingesting
on its own core; the driver imports Ray, connects to ``address`` (or starts an instance of
``workers`` CPUs), starts one Ray worker per CPU with an empty task, and then runs the tasks
the build sends it. No segment is full before about a third of the input is read, so on a
build of any size Ray is ready before it is needed. The build process never imports Ray (so
Ray's handlers, threads and console output stay out of it).

Protocol: length-prefixed pickles (:func:`~snapaudit.testbed.corpus.workers.send_pickle`).
The build sends ``("start", address, workers)`` once, then ``(tid, function, args)`` per task,
and ``None`` to close; the driver answers ``(tid, ok, value)`` as each task ends, in any
order, and ``(-1, False, error)`` if Ray did not start. On close (or when the build's end of
the pipe closes) the driver shuts down the Ray instance it started (running tasks included),
or disconnects from a cluster it joined, and exits; :meth:`RayProcessEngine.close` waits for
it. On an instance the driver starts (this machine's cores), tasks beyond
:func:`~snapaudit.testbed.corpus.executor_base.ingest_limit` wait in the build process while it
ingests, as with the local pool.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import select
import subprocess
import tempfile
import threading
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import IO, Any

from snapaudit.errors import BackendError
from snapaudit.testbed.corpus.executor_base import (
    RAY_MISSING,
    Engine,
    ingest_limit,
    ray_connect,
    ray_module,
)
from snapaudit.testbed.corpus.workers import (
    recv_pickle,
    send_answer,
    send_pickle,
    serve_pipes,
    start_python,
    take_pickles,
)

_BOOT = "from snapaudit.testbed.corpus.ray_process import serve; serve()"
_START_FAILED = -1


def _plain(exc: Exception) -> Exception:
    """The task's own exception where Ray wrapped one (it pickles without Ray)."""
    cause = getattr(exc, "cause", None)
    return cause if isinstance(cause, Exception) else BackendError(f"Ray task failed: {exc}")


def _empty() -> None:
    return None


def _call(fn: Callable[..., Any], *args: Any) -> Any:
    """Any picklable callable as a Ray task (``ray.remote`` takes Python functions only)."""
    return fn(*args)


def serve() -> None:
    """The Ray driver process: stdin -> Ray tasks -> answers on stdout (stray output to
    stderr)."""
    inp, out = serve_pipes()
    lock = threading.Lock()

    def answer(tid: int, ok: bool, value: Any) -> None:
        with lock, contextlib.suppress(OSError):  # the build has gone: nothing to tell
            send_answer(out, (tid,), ok, value)

    try:
        _, address, workers = recv_pickle(inp)
        ray_connect(address, workers)
        ray = ray_module()
        warm = ray.remote(num_cpus=1)(_empty)
        ray.get([warm.remote() for _ in range(workers)])  # one started worker per CPU
    except (Exception, EOFError) as exc:
        answer(_START_FAILED, False, exc if isinstance(exc, BackendError) else BackendError(
            f"Ray did not start: {type(exc).__name__}: {exc}"))
        return
    try:
        _run_tasks(ray, inp, answer)
    finally:
        ray.shutdown()


def _run_tasks(ray: Any, inp: IO[bytes], answer: Callable[[int, bool, Any], None]) -> None:
    call = ray.remote(num_cpus=1)(_call)

    def done(tid: int, fut: Future[Any]) -> None:
        try:
            answer(tid, True, fut.result())
        except Exception as exc:
            answer(tid, False, _plain(exc))

    while True:
        try:
            msg = recv_pickle(inp)
        except EOFError:
            return
        if msg is None:
            return
        tid, fn, args = msg
        try:
            name = getattr(fn, "__name__", "task")
            fut = call.options(name=name).remote(fn, *args).future()
        except Exception as exc:
            answer(tid, False, _plain(exc))
            continue
        fut.add_done_callback(functools.partial(done, tid))


class _Task:
    def __init__(self, engine: RayProcessEngine, tid: int):
        self.engine, self.tid = engine, tid

    def result(self) -> Any:
        return self.engine._result(self.tid)


class RayProcessEngine(Engine):
    """Ray tasks sent to a Ray driver process (see the module docstring)."""

    def __init__(self, workers: int, address: str | None = None):
        if importlib.util.find_spec("ray") is None:
            raise BackendError(RAY_MISSING)
        self.workers = workers
        self._own = address is None  # an instance on this machine's cores
        self._limit: int | None = None  # tasks sent and not answered, at most
        self._held: deque[tuple[int, Callable[..., Any], tuple[Any, ...]]] = deque()
        self._answers: dict[int, tuple[bool, Any]] = {}
        self._running = self._next = 0
        self._buf = bytearray()
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self._proc = start_python(_BOOT, stderr=self._log)
        self._send(("start", address, workers))

    @property
    def held(self) -> int:
        """Tasks submitted and not yet sent to the driver process."""
        return len(self._held)

    def submit(self, fn: Callable[..., Any], *args: Any) -> _Task:
        self._next += 1
        self._held.append((self._next, fn, args))
        self.poll()
        return _Task(self, self._next)

    def set_ingesting(self, ingesting: bool) -> None:
        self._limit = ingest_limit(self.workers) if ingesting and self._own else None
        self.poll()

    def poll(self) -> None:
        self._read(block=False)
        while self._held and (self._limit is None or self._running < self._limit):
            self._send(self._held.popleft())
            self._running += 1

    def _result(self, tid: int) -> Any:
        if any(t == tid for t, _, _ in self._held):
            self.set_ingesting(False)  # the caller waits: its own work is over
        while tid not in self._answers:
            self._read(block=True)
        ok, value = self._answers.pop(tid)
        if not ok:
            raise value
        return value

    def _send(self, msg: Any) -> None:
        assert self._proc.stdin is not None
        try:
            send_pickle(self._proc.stdin, msg)
        except BrokenPipeError:
            raise self._gone() from None

    def _read(self, block: bool) -> None:
        """Take the answers that have arrived (with ``block``, wait for at least one)."""
        assert self._proc.stdout is not None
        fd = self._proc.stdout.fileno()
        while block or select.select([fd], [], [], 0)[0]:
            data = os.read(fd, 1 << 16)
            if not data:
                raise self._gone()
            self._buf += data
            if self._unpack() and block:
                return

    def _unpack(self) -> int:
        msgs = take_pickles(self._buf)
        for tid, ok, value in msgs:
            if tid == _START_FAILED:
                raise value
            self._answers[tid] = (ok, value)
            self._running -= 1
        return len(msgs)

    def _gone(self) -> Exception:
        """The driver process ended: its start failure if it sent one, else its exit code
        and the last line it wrote."""
        assert self._proc.stdout is not None
        with contextlib.suppress(OSError):
            while chunk := os.read(self._proc.stdout.fileno(), 1 << 16):
                self._buf += chunk
        try:
            self._unpack()
        except Exception as exc:  # what the driver process said before it ended
            return exc
        code = self._proc.wait()
        self._log.seek(0)
        lines = [line for line in self._log.read().decode(errors="replace").splitlines()
                 if line.strip()]
        last = f": {lines[-1].strip()}" if lines else ""
        return BackendError(f"the Ray driver process exited (code {code}){last}")

    def abort(self) -> None:
        """Stop at once: SIGTERM makes the driver process shut down the Ray it started (Ray's
        own handler), or, while Ray is still starting, end with Ray's processes (they share
        its fate)."""
        if self._proc.poll() is None:
            self._proc.terminate()
        self.close()

    def close(self) -> None:
        """Tell the driver process to shut Ray down (tasks still running stop), wait for it."""
        if self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                send_pickle(self._proc.stdin, None)
            with contextlib.suppress(OSError):
                self._proc.stdin.close()
        try:
            self._proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        if self._proc.stdout is not None:
            self._proc.stdout.close()
        self._log.close()
