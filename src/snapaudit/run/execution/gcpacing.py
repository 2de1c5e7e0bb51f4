"""Garbage-collector pacing while a stage's cells run, chosen by the application.

The collector is process-wide, so library code leaves it alone unless asked: a stage paces it
(:func:`paced_gc`) only inside a :func:`gc_pacing` block. The CLI opens one around every
command (its behaviour and speed are those of before); ``snapaudit.audit(pace_gc=True)`` opens
one around its run. The choice is a context variable, so it holds for the coroutines and
threads started inside the block and for nothing else; the thresholds and the freeze are put
back when the last paced stage ends. :func:`quiet_imports` is the application's other choice:
no collection while a command's modules are first imported.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator
from contextvars import ContextVar

GC_YOUNG = 20_000  # allocations between young collections while cells run (default 700)

_ENABLED: ContextVar[bool] = ContextVar("snapaudit_gc_pacing", default=False)


class _Pacing:
    lock = threading.Lock()
    users = 0  # paced stages running now (in any thread: the collector is the process's)
    saved = (700, 10, 10)  # the thresholds before the first of them
    importers = 0  # quiet_imports blocks open now
    paused = False  # whether the first of them disabled the collector


@contextlib.contextmanager
def gc_pacing(enabled: bool = True) -> Iterator[None]:
    """Stages run inside this block pace the collector (``enabled``) or leave it alone."""
    token = _ENABLED.set(enabled)
    try:
        yield
    finally:
        _ENABLED.reset(token)


@contextlib.contextmanager
def paced_gc() -> Iterator[None]:
    """While cells run: what was alive before is frozen out of garbage collection, and young
    collections come every ``GC_YOUNG`` allocations. Each call allocates many objects that
    live for the call's duration; with the default pacing they were promoted to the old
    generation and triggered full collections every second or so, each stopping the event
    loop for tens of milliseconds (about a tenth of the stage's wall time at concurrency 256).
    Stages running at once share one pacing; the last to finish restores the thresholds."""
    with _Pacing.lock:
        if _Pacing.users == 0:
            _Pacing.saved = gc.get_threshold()
            gc.freeze()
            gc.set_threshold(max(_Pacing.saved[0], GC_YOUNG), *_Pacing.saved[1:])
        _Pacing.users += 1
    try:
        yield
    finally:
        with _Pacing.lock:
            _Pacing.users -= 1
            if _Pacing.users == 0:
                gc.set_threshold(*_Pacing.saved)
                gc.unfreeze()


def stage_gc() -> contextlib.AbstractContextManager[None]:
    """What a stage enters around its cells: :func:`paced_gc` inside a pacing block, else
    nothing."""
    return paced_gc() if _ENABLED.get() else contextlib.nullcontext()


@contextlib.contextmanager
def quiet_imports() -> Iterator[None]:
    """No collection while the block imports a command's modules (numpy's, pydantic's, the
    library's): they build hundreds of thousands of objects that live as long as the process,
    and the default thresholds traverse them over and over (~0.02-0.04 s of a short
    ``snapaudit analyze``, 100+ collections). At the end, where no paced stage holds a
    freeze, what is alive goes to the oldest generation (``freeze`` then ``unfreeze``), where
    only full collections look; the collector is enabled again. A collector disabled before
    the block stays disabled; blocks in several threads share one pause."""
    with _Pacing.lock:
        if _Pacing.importers == 0:
            _Pacing.paused = gc.isenabled()
            gc.disable()
        _Pacing.importers += 1
    try:
        yield
    finally:
        with _Pacing.lock:
            _Pacing.importers -= 1
            if _Pacing.importers == 0 and _Pacing.paused:
                if _Pacing.users == 0:
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()
