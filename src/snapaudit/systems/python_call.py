"""One call of a Python system's target, the same in a thread, on the event loop and in a
worker process (:mod:`snapaudit.systems.workers`): what the target receives
(:class:`PythonCall`), how it is imported (:func:`load_target`), how its ``setup`` is run
(:func:`run_setup`), and what came back (:class:`Returned`: the value, or the exception as
text and a redacted traceback, and the latency measured around the target call itself).

Standard library only (and :mod:`snapaudit.errors`, :mod:`snapaudit.systems.redact`): a
worker process imports this and the user's code, nothing else of snapaudit.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
import time
import traceback
from collections.abc import Callable, Mapping
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


def load_target(target: str, search_path: Path | None = None) -> Callable[..., Any]:
    """Import ``package.module:function`` (ConfigError naming the problem)."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"python target {target!r}: expected 'package.module:function'")
    if search_path is not None and str(search_path) not in sys.path:
        sys.path.insert(0, str(search_path))
    try:
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


def call_sync(fn: Callable[..., Any], call: PythonCall, kwargs: Mapping[str, Any]) -> Returned:
    """One call of a sync target (in a thread or a worker process)."""
    start = time.monotonic()
    try:
        value = fn(call, **kwargs)
    except Exception as exc:  # the pipeline's own failure: one retryable attempt
        return Returned(latency_s=time.monotonic() - start, error=exception_text(exc),
                        traceback=traceback_tail(exc))
    return Returned(value, time.monotonic() - start)


async def call_async(fn: Callable[..., Any], call: PythonCall,
                     kwargs: Mapping[str, Any]) -> Returned:
    """One call of an async target; the clock starts when its coroutine first runs."""
    start = time.monotonic()
    try:
        value = await fn(call, **kwargs)
    except Exception as exc:  # the pipeline's own failure: one retryable attempt
        return Returned(latency_s=time.monotonic() - start, error=exception_text(exc),
                        traceback=traceback_tail(exc))
    return Returned(value, time.monotonic() - start)


def setup_failed(setup: str, state: str, why: str) -> ConfigError:
    return ConfigError(f"state {state}: setup {setup!r} failed: {why}")


def run_setup(setup: str, search_path: Path | None, state: str) -> Any:
    """Call ``setup`` (``module:function``, no arguments; a coroutine function is run to
    completion on a loop of its own) and return its value; ConfigError naming it on failure.
    Not for a thread with a running event loop (:func:`arun_setup` is)."""
    fn = load_target(setup, search_path)
    try:
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
        if inspect.iscoroutinefunction(fn):
            return await fn()
        value = await asyncio.to_thread(fn)
        return await _awaited(value) if inspect.isawaitable(value) else value
    except Exception as exc:  # the user's setup failing: a configuration problem
        raise setup_failed(setup, state, exception_text(exc)) from None


async def _awaited(value: Any) -> Any:
    return await value
