"""Local worker processes that never import the caller's ``__main__``, reaped deterministically.

Each worker is ``python -c "from snapaudit.testbed.corpus.workers import serve; serve()"``:
it reads length-prefixed pickles ``(function, args)`` on stdin and answers ``(ok, value)`` on
stdout, one call at a time, until stdin closes. Functions travel by reference (module and
name), so they must be importable module-level functions. Unlike ``multiprocessing`` with
``spawn`` or ``forkserver``, the worker does not re-run the caller's script, so
``build_corpus(workers=2)`` needs no ``if __name__ == "__main__":`` guard. Workers ignore
Ctrl-C (the caller decides) and exit when their stdin closes; :meth:`Worker.close` waits for
each process and closes its pipes, so no process outlives the pool and none is left for the
garbage collector to reap.

:class:`WorkerPool` runs submitted calls on N workers (one feeder thread per worker, a shared
queue) and returns :class:`concurrent.futures.Future` objects. :meth:`WorkerPool.set_limit`
caps how many calls run at once (the rest wait in the queue), so the caller can keep a core
for itself while it has work of its own.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import queue
import signal
import struct
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import IO, Any

from snapaudit.errors import BackendError

_BOOT = "from snapaudit.testbed.corpus.workers import serve; serve()"
_LEN = struct.Struct("<Q")


def send_pickle(f: IO[bytes], obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    f.write(_LEN.pack(len(data)) + data)
    f.flush()


def recv_pickle(f: IO[bytes]) -> Any:
    head = f.read(_LEN.size)
    if len(head) < _LEN.size:
        raise EOFError
    size = _LEN.unpack(head)[0]
    data = f.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


def take_pickles(buf: bytearray) -> list[Any]:
    """The whole messages at the start of ``buf`` (removed from it), for a reader that
    gathers bytes without blocking; a partial message stays for the next call."""
    msgs = []
    while len(buf) >= _LEN.size:
        size = _LEN.unpack_from(buf)[0]
        if len(buf) < _LEN.size + size:
            break
        msgs.append(pickle.loads(buf[_LEN.size:_LEN.size + size]))
        del buf[:_LEN.size + size]
    return msgs


def send_answer(f: IO[bytes], head: tuple[Any, ...], ok: bool, value: Any) -> None:
    """Send ``head + (ok, value)``; if that does not pickle, ``head + (False, error)``."""
    try:
        send_pickle(f, (*head, ok, value))
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        send_pickle(f, (*head, False, BackendError(f"worker answer not picklable: {exc}")))


def serve_pipes() -> tuple[IO[bytes], IO[bytes]]:
    """A served process's input and answer pipes (stdin, the original stdout). Ctrl-C is
    ignored (the caller decides) and stray prints go to stderr."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    return sys.stdin.buffer, out


def start_python(code: str, stderr: IO[bytes] | None = None) -> subprocess.Popen[bytes]:
    """``python -c code`` with this process's import path, pipes on stdin and stdout."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=stderr, env=env)


def serve() -> None:
    """The worker loop (stdin -> calls -> stdout); stray prints go to stderr."""
    inp, out = serve_pipes()
    while True:
        try:
            fn, args = recv_pickle(inp)
        except EOFError:
            return
        try:
            value, ok = fn(*args), True
        except Exception as exc:
            value, ok = exc, False
        send_answer(out, (), ok, value)


class Worker:
    """One worker process; :meth:`call` runs ``fn(*args)`` there and returns its value."""

    def __init__(self) -> None:
        self.proc = start_python(_BOOT)

    def send(self, fn: Callable[..., Any], *args: Any) -> None:
        assert self.proc.stdin is not None
        try:
            send_pickle(self.proc.stdin, (fn, args))
        except BrokenPipeError as exc:
            raise self._died() from exc

    def receive(self) -> Any:
        assert self.proc.stdout is not None
        try:
            ok, value = recv_pickle(self.proc.stdout)
        except EOFError:
            raise self._died() from None
        if not ok:
            raise value
        return value

    def call(self, fn: Callable[..., Any], *args: Any) -> Any:
        self.send(fn, *args)
        return self.receive()

    def _died(self) -> BackendError:
        code = self.proc.poll()
        return BackendError(f"worker process {self.proc.pid} exited (code {code})")

    def close(self, kill: bool = False) -> None:
        """Stop the worker (at once with ``kill``), wait for it, close its pipes."""
        if kill and self.proc.poll() is None:
            self.proc.kill()
        for pipe in (self.proc.stdin, self.proc.stdout):
            if pipe is not None:
                with contextlib.suppress(BrokenPipeError):
                    pipe.close()
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


class WorkerPool:
    """``workers`` worker processes fed from one queue; :meth:`submit` returns a Future."""

    def __init__(self, workers: int):
        self.workers: list[Worker] = []
        self._tasks: queue.Queue[tuple[Callable[..., Any], tuple[Any, ...], Future[Any]] | None]
        self._tasks = queue.Queue()
        self._threads: list[threading.Thread] = []
        self._slots = threading.Condition()
        self._limit = workers
        self._active = 0
        try:
            for _ in range(workers):
                self.workers.append(Worker())
        except BaseException:
            self.close(kill=True)
            raise
        for w in self.workers:
            t = threading.Thread(target=self._feed, args=(w,), daemon=True)
            t.start()
            self._threads.append(t)

    def set_limit(self, limit: int) -> None:
        """At most ``limit`` calls run at once from now on (1 .. the worker count)."""
        with self._slots:
            self._limit = max(1, min(limit, len(self.workers)))
            self._slots.notify_all()

    def _feed(self, worker: Worker) -> None:
        while True:
            item = self._tasks.get()
            if item is None:
                return
            with self._slots:  # a call holds a slot while it runs, not while it waits
                self._slots.wait_for(lambda: self._active < self._limit)
                self._active += 1
            try:
                self._run(worker, *item)
            finally:
                with self._slots:
                    self._active -= 1
                    self._slots.notify()

    @staticmethod
    def _run(worker: Worker, fn: Callable[..., Any], args: tuple[Any, ...],
             fut: Future[Any]) -> None:
        if not fut.set_running_or_notify_cancel():
            return
        try:
            fut.set_result(worker.call(fn, *args))
        except BaseException as exc:
            fut.set_exception(exc)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Future[Any]:
        fut: Future[Any] = Future()
        self._tasks.put((fn, args, fut))
        return fut

    def close(self, kill: bool = False) -> None:
        """Finish queued calls (or, with ``kill``, cancel them and stop the workers at once),
        then wait for every worker process."""
        self.set_limit(len(self.workers))  # every feeder must reach its end-of-queue marker
        if kill:
            while True:
                try:
                    item = self._tasks.get_nowait()
                except queue.Empty:
                    break
                if item is not None:
                    item[2].cancel()
            for w in self.workers:
                if w.proc.poll() is None:
                    w.proc.kill()  # a feeder blocked on its answer gets EOF
        for _ in self._threads:
            self._tasks.put(None)
        for t in self._threads:
            t.join()
        for w in self.workers:
            w.close()
