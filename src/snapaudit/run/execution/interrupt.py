"""Ctrl-C for a run: one clean stop, whatever the number of SIGINTs.

:func:`interruptible` runs a coroutine on a fresh event loop (as :func:`asyncio.run` does)
with its own SIGINT handler: the first SIGINT cancels the coroutine's task, which then
cleans up (the runner's group committer finishes its batch in flight, calls in flight are
abandoned and their attempts marked ``interrupted``, systems are closed); further SIGINTs
while it does so are ignored, so no KeyboardInterrupt can land inside that cleanup or inside
closing the ledger. Then ``KeyboardInterrupt`` is raised (the CLI exits 130). An abandoned
local-model call keeps its own daemon thread until the process exits; nothing waits for
it. Outside the main thread the coroutine runs under plain
:func:`asyncio.run`.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Coroutine, Iterator
from types import FrameType
from typing import Any


@contextlib.contextmanager
def interruptible() -> Iterator[Callable[[Coroutine[Any, Any, Any]], Any]]:
    """``with interruptible() as run: run(coro)``; the handler covers the whole block (put
    the ledger's close inside it), then the previous handler is restored."""
    if threading.current_thread() is not threading.main_thread():
        yield asyncio.run
        return
    state: dict[str, Any] = {"hits": 0, "task": None, "loop": None}

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        state["hits"] += 1
        task, loop = state["task"], state["loop"]
        if state["hits"] == 1 and task is not None and not task.done():
            loop.call_soon_threadsafe(task.cancel)

    def run(coro: Coroutine[Any, Any, Any]) -> Any:
        if state["hits"]:
            coro.close()
            raise KeyboardInterrupt
        loop = asyncio.new_event_loop()
        state["loop"], state["task"] = loop, loop.create_task(coro)
        try:
            return loop.run_until_complete(state["task"])
        except asyncio.CancelledError:
            if state["hits"]:
                raise KeyboardInterrupt from None
            raise
        finally:
            state["task"] = None
            _close(loop)

    previous = signal.signal(signal.SIGINT, on_sigint)
    try:
        yield run
        if state["hits"]:
            raise KeyboardInterrupt
    finally:
        signal.signal(signal.SIGINT, previous)


def _close(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what is left, close async generators, close the loop (threads not awaited)."""
    try:
        left = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for t in left:
            t.cancel()
        if left:
            loop.run_until_complete(asyncio.gather(*left, return_exceptions=True))
        loop.run_until_complete(loop.shutdown_asyncgens())
        # as asyncio.run: lets closed transports finish closing; the default executor only
        # runs ledger batches, which are awaited already (model calls have their own thread)
        loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        loop.close()
