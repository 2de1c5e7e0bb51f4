"""Group commit of ledger writes from many coroutines, in one writer thread of its own.

Each write is queued and awaited. The writer thread takes everything queued so far and runs
it in one transaction (one fsync, :meth:`Ledger.run_batch`), hands the results back to the
event loop in one callback, and goes straight on to what was queued meanwhile: at high
concurrency the cost of a durable commit is shared by every cell waiting on it, and no
commit waits for the event loop to start it. A write returns only after its group is
committed, so an attempt row is still durable before its call is made.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Any

from snapaudit.run.record.ledger import Ledger

_Op = Callable[[Ledger], Any]
_Item = tuple[_Op, "asyncio.Future[Any]"]


class GroupCommitter:
    """Ledger writes from many coroutines of one event loop, committed in groups."""

    def __init__(self, ledger: Ledger):
        self.ledger = ledger
        self._loop = asyncio.get_running_loop()
        self._queue: queue.SimpleQueue[_Item | None] = queue.SimpleQueue()
        self._stopped: asyncio.Future[None] = self._loop.create_future()
        self._closing = False
        self._thread = threading.Thread(target=self._work, name="snapaudit-ledger", daemon=True)
        self._thread.start()

    async def call(self, op: _Op) -> Any:
        """Run ``op(ledger)`` in the next group; its result once the group is committed."""
        fut: asyncio.Future[Any] = self._loop.create_future()
        self._queue.put((op, fut))
        return await fut

    def _work(self) -> None:
        try:
            while True:
                batch, stop = self._take()
                if batch:
                    self._commit(batch)
                if stop:
                    return
        finally:
            self._to_loop(_set_done, self._stopped)

    def _take(self) -> tuple[list[_Item], bool]:
        """Everything queued (waiting for the first); True once the close marker is read."""
        batch: list[_Item] = []
        item = self._queue.get()
        while item is not None:
            batch.append(item)
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return batch, False
        return batch, True

    def _commit(self, batch: list[_Item]) -> None:
        try:
            results: list[Any] | BaseException = self.ledger.run_batch([op for op, _ in batch])
        except BaseException as exc:  # the whole group failed (e.g. the ledger was closed)
            results = exc
        self._to_loop(_deliver, batch, results)

    def _to_loop(self, fn: Callable[..., None], *args: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody is waiting
            self._loop.call_soon_threadsafe(fn, *args)

    async def aclose(self) -> None:
        """Commit what is queued, then stop; never returns while a group is in the writer
        thread (closing the ledger under a running batch crashed SQLite), even when
        cancelled."""
        if not self._closing:
            self._closing = True
            self._queue.put(None)
        try:
            await asyncio.shield(self._stopped)
        finally:
            if not self._stopped.done():
                with contextlib.suppress(BaseException):
                    await asyncio.wait({self._stopped})


def _deliver(batch: list[_Item], results: list[Any] | BaseException) -> None:
    for i, (_, fut) in enumerate(batch):
        if fut.done():  # its caller was cancelled
            continue
        result = results if isinstance(results, BaseException) else results[i]
        if isinstance(result, BaseException):
            fut.set_exception(result)
        else:
            fut.set_result(result)


def _set_done(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)
