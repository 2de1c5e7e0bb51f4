"""The body of one worker process of ``isolation = "process"`` (:mod:`snapaudit.systems.workers`).

Started with the ``spawn`` context (a fresh interpreter: no fork of a process with threads),
it imports the target once, runs ``setup`` once, says ``("ready", pid)`` (or ``("failed",
message)``) and then answers ``("call", PythonCall)`` messages from its pipe one at a time
with a :class:`~snapaudit.systems.python_call.Returned`, until ``("stop",)`` or the pipe
closes. Ctrl-C is the parent's to handle: the worker ignores SIGINT (the parent stops it).
"""

from __future__ import annotations

import asyncio
import inspect
import os
import signal
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from snapaudit.errors import ConfigError
from snapaudit.systems.python_call import (
    Returned,
    call_async,
    call_sync,
    exception_text,
    load_target,
    run_setup,
)


def serve(conn: Connection, target: str, setup: str | None, search: str | None,
          kwargs: dict[str, Any], state: str) -> None:
    """Import, set up, then answer calls until told to stop (the worker's ``run``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    path = Path(search) if search is not None else None
    try:
        fn = load_target(target, path)
        call_kwargs = dict(kwargs)
        if setup is not None:
            call_kwargs["resources"] = run_setup(setup, path, state)
    except ConfigError as exc:
        conn.send(("failed", str(exc)))
        return
    conn.send(("ready", os.getpid()))
    loop = asyncio.new_event_loop() if inspect.iscoroutinefunction(fn) else None
    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):  # the parent went away
                return
            if message[0] != "call":
                return
            kwargs_now = {**call_kwargs, **message[2]}  # with attribute's evidence, if any
            if loop is not None:
                returned = loop.run_until_complete(call_async(fn, message[1], kwargs_now))
            else:
                returned = call_sync(fn, message[1], kwargs_now)
            _send(conn, returned)
    finally:
        if loop is not None:
            loop.close()


def _send(conn: Connection, returned: Returned) -> None:
    try:
        conn.send(returned)
    except (EOFError, OSError):  # the parent went away
        raise SystemExit(0) from None
    except Exception as exc:  # a return value that cannot be pickled: the attempt fails
        conn.send(Returned(latency_s=returned.latency_s,
                           error="the return value cannot be sent back from the worker "
                                 f"process: {exception_text(exc)}"))
