"""The body of one worker process of ``isolation = "process"`` (:mod:`snapaudit.systems.workers`).

Started with the ``spawn`` context (a fresh interpreter: no fork of a process with threads),
it imports the target once, runs ``setup`` once, says ``("ready", pid)`` (or ``("failed",
message)``) and then answers ``("call", PythonCall)`` messages from its pipe one at a time
with a :class:`~snapaudit.systems.python_call.Returned`, until ``("stop",)`` or the pipe
closes. Ctrl-C is the parent's to handle: the worker ignores SIGINT (the parent stops it).

A worker never outlives the process that started it: on Linux the kernel kills it when its
parent dies (``PR_SET_PDEATHSIG``), elsewhere a thread of its own exits it once its parent is
gone, so a parent killed in the middle of a hanging call (SIGKILL, a native abort) leaves no
worker behind. Each reply also carries the modules the call imported
(:class:`~snapaudit.systems.python_call.ModuleWatch`): the parent binds the project's own.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import inspect
import os
import signal
import sys
import threading
import time
from dataclasses import replace
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from snapaudit.errors import ConfigError
from snapaudit.systems.python_call import (
    ModuleWatch,
    Returned,
    call_async,
    call_sync,
    exception_text,
    import_path,
    load_target,
    run_setup,
)

PR_SET_PDEATHSIG = 1
PARENT_POLL_S = 0.5


def die_with_parent(parent: int) -> None:
    """End this process when ``parent`` (the process that started it) ends."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):  # no libc prctl: the thread alone
            ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:  # it ended before the line above
        os._exit(1)
    threading.Thread(target=_watch_parent, args=(parent,), name="snapaudit-parent-watch",
                     daemon=True).start()


def _watch_parent(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_S)
    os._exit(1)


def serve(conn: Connection, target: str, setup: str | None, search: str | None,
          kwargs: dict[str, Any], state: str, parent: int | None = None) -> None:
    """Import, set up, then answer calls until told to stop (the worker's ``run``)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if parent is not None:
        die_with_parent(parent)
    path = Path(search) if search is not None else None
    with import_path(path):  # this process is the worker's own: the whole of its life
        try:
            fn = load_target(target, path)
            watch = ModuleWatch()  # from here: what setup and the calls import
            call_kwargs = dict(kwargs)
            if setup is not None:
                call_kwargs["resources"] = run_setup(setup, path, state)
        except ConfigError as exc:
            conn.send(("failed", str(exc)))
            return
        conn.send(("ready", os.getpid()))
        _answer(conn, fn, call_kwargs, watch)


def _answer(conn: Connection, fn: Any, call_kwargs: dict[str, Any],
            watch: ModuleWatch) -> None:
    """Answer ``("call", PythonCall, extra)`` messages until the pipe closes or says stop."""
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
            _send(conn, replace(returned, modules=watch.gained()))
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
                                 f"process: {exception_text(exc)}", modules=returned.modules))
