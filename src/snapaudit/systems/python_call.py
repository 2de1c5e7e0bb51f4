"""One call of a Python system's target, the same in a thread, on the event loop and in a
worker process (:mod:`snapaudit.systems.workers`): what the target receives
(:class:`PythonCall`), how it is imported (:func:`load_target`), how its ``setup`` is run
(:func:`run_setup`), and what came back (:class:`Returned`: the value, or the exception as
text and a redacted traceback, and the latency measured around the target call itself).

``python_path`` is on ``sys.path`` only while the target's code runs (:func:`import_path`:
its import, its ``setup``, each call, so a sibling module it imports lazily at call time is
found) and removed after: a run leaves ``sys.path`` as it found it.

Standard library only (and :mod:`snapaudit.errors`, :mod:`snapaudit.systems.redact`): a
worker process imports this and the user's code, nothing else of snapaudit.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import inspect
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from snapaudit.errors import ConfigError
from snapaudit.systems.redact import redact


@dataclass(frozen=True, slots=True)
class PythonCall:
    """What a Python system receives for one attempt at one cell."""

    question: str
    question_id: str
    state: str
    repeat: int
    seed: int
    attempt: int
    # a conversation's user turns, to answer in order (reply ``turn_answers``, one per
    # turn); None: a single-turn question
    turns: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class Returned:
    """What one call of the target gave: ``value``, or ``error`` (``Type: message``) and its
    ``traceback``; ``latency_s`` is measured around the target call alone; ``blocked_s``: how
    long an async target held the event loop during the call (when over a second)."""

    value: Any = None
    latency_s: float = 0.0
    error: str | None = None
    traceback: str = ""
    blocked_s: float = 0.0
    config_error: bool = False  # the target raised a snapaudit ConfigError (e.g. DocIdError)
    modules: tuple[tuple[str, str], ...] = ()  # a worker's: modules gained, with their files


class _ImportPath:
    """Folders put first on ``sys.path`` while some target code runs, counted per folder, so
    that overlapping calls (threads, tasks) share one entry and the last one out removes it.
    A folder already on ``sys.path`` is left alone."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._users: dict[str, int] = {}

    @contextlib.contextmanager
    def scope(self, folder: Path | None) -> Iterator[None]:
        if folder is None:
            yield
            return
        entry = str(folder)
        with self._lock:
            if entry in self._users:
                self._users[entry] += 1
            elif entry not in sys.path:
                sys.path.insert(0, entry)
                self._users[entry] = 1
            else:
                entry = ""  # the program's own entry: not ours to remove
        try:
            yield
        finally:
            if entry:
                with self._lock:
                    self._users[entry] -= 1
                    if not self._users[entry]:
                        del self._users[entry]
                        with contextlib.suppress(ValueError):  # someone removed it meanwhile
                            sys.path.remove(entry)


import_path = _ImportPath().scope


def load_target(target: str, search_path: Path | None = None) -> Callable[..., Any]:
    """Import ``package.module:function`` (ConfigError naming the problem), with
    ``search_path`` on ``sys.path`` during the import only."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"python target {target!r}: expected 'package.module:function'")
    try:
        with import_path(search_path):
            module = importlib.import_module(module_name)
    except Exception as exc:  # any import-time failure of user code is a config problem
        raise ConfigError(f"python target {target!r}: cannot import {module_name!r}: "
                          f"{type(exc).__name__}: {exc}") from None
    obj: Any = module
    for part in attr.split("."):
        obj = getattr(obj, part, None)
        if obj is None:
            raise ConfigError(f"python target {target!r}: {module_name!r} has no {attr!r}")
    if not callable(obj):
        raise ConfigError(f"python target {target!r} is not callable")
    return obj  # type: ignore[no-any-return]


class ModuleWatch:
    """The modules ``sys.modules`` gained since the last look, with their files (the local
    modules a target imports at call time are bound like those it imports at import time)."""

    def __init__(self) -> None:
        self._known = set(sys.modules.copy())

    def gained(self) -> tuple[tuple[str, str], ...]:
        """``(name, file)`` of each module imported since the last look (cheap when none)."""
        if len(sys.modules) == len(self._known):
            return ()
        now = set(sys.modules.copy())  # a copy: another thread may import meanwhile
        new, self._known = now - self._known, now
        files = ((name, getattr(sys.modules.get(name), "__file__", None)) for name in new)
        return tuple(sorted((n, f) for n, f in files if isinstance(f, str)))


TRACEBACK_CHARS = 4096


def traceback_tail(exc: BaseException, limit: int = TRACEBACK_CHARS) -> str:
    """``exc``'s traceback, redacted, cut to its last ``limit`` characters at a line start
    (the innermost frames and the exception itself are kept; the outer frames go first)."""
    text = redact("".join(traceback.format_exception(exc)))
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    cut = cut[cut.find("\n") + 1:] if "\n" in cut else cut
    return "... (outer frames cut)\n" + cut


def exception_text(exc: BaseException) -> str:
    """``Type: message`` on one line, the message cut at 300 characters."""
    return f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"


def _raised(exc: Exception, start: float) -> Returned:
    """What a raising call gave: one retryable attempt, unless the target raised a
    ConfigError (a stable id missing, an extra not installed): retrying cannot fix that."""
    return Returned(latency_s=time.monotonic() - start, error=exception_text(exc),
                    traceback=traceback_tail(exc), config_error=isinstance(exc, ConfigError))


def call_sync(fn: Callable[..., Any], call: PythonCall, kwargs: Mapping[str, Any],
              search: Path | None = None) -> Returned:
    """One call of a sync target (in a thread or a worker process), ``search`` on the import
    path while it runs."""
    start = time.monotonic()
    try:
        with import_path(search):
            value = fn(call, **kwargs)
    except Exception as exc:  # the pipeline's own failure
        return _raised(exc, start)
    return Returned(value, time.monotonic() - start)


async def call_async(fn: Callable[..., Any], call: PythonCall, kwargs: Mapping[str, Any],
                     search: Path | None = None) -> Returned:
    """One call of an async target; the clock starts when its coroutine first runs."""
    start = time.monotonic()
    try:
        with import_path(search):
            value = await fn(call, **kwargs)
    except Exception as exc:  # the pipeline's own failure
        return _raised(exc, start)
    return Returned(value, time.monotonic() - start)


def setup_failed(setup: str, state: str, why: str) -> ConfigError:
    return ConfigError(f"state {state}: setup {setup!r} failed: {why}")


def run_setup(setup: str, search_path: Path | None, state: str) -> Any:
    """Call ``setup`` (``module:function``, no arguments; a coroutine function is run to
    completion on a loop of its own) and return its value; ConfigError naming it on failure.
    Not for a thread with a running event loop (:func:`arun_setup` is)."""
    fn = load_target(setup, search_path)
    try:
        with import_path(search_path):
            value = fn()
            if inspect.isawaitable(value):
                value = asyncio.run(_awaited(value))
    except Exception as exc:  # the user's setup failing: a configuration problem
        raise setup_failed(setup, state, exception_text(exc)) from None
    return value


async def arun_setup(setup: str, search_path: Path | None, state: str) -> Any:
    """:func:`run_setup` from the event loop: a sync setup runs in a thread (loading a model
    must not block the loop), an async one is awaited."""
    fn = load_target(setup, search_path)
    try:
        with import_path(search_path):
            if inspect.iscoroutinefunction(fn):
                return await fn()
            value = await asyncio.to_thread(fn)
            return await _awaited(value) if inspect.isawaitable(value) else value
    except Exception as exc:  # the user's setup failing: a configuration problem
        raise setup_failed(setup, state, exception_text(exc)) from None


async def _awaited(value: Any) -> Any:
    return await value
