"""The engine interface (:class:`Engine`: runs tasks in this process), the cores a build may
use beside its own ingest, and the Ray session helpers shared by the Ray engines and Ray shard
servers. The engines themselves: :mod:`snapaudit.testbed.corpus.executor` (and
:mod:`snapaudit.testbed.corpus.ray_process`).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Protocol

from snapaudit.errors import BackendError


def free_cores() -> int:
    """Cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1


def ingest_limit(workers: int) -> int:
    """Tasks at once beside an ingesting process on this machine: one core kept for it."""
    return max(1, min(workers, free_cores() - 1))


class Handle(Protocol):
    def result(self) -> Any: ...


class _Done:
    def __init__(self, value: Any):
        self.value = value

    def result(self) -> Any:
        return self.value


class Engine:
    """Runs tasks in this process, one after another (``--workers 1``)."""

    workers = 1

    def submit(self, fn: Callable[..., Any], *args: Any) -> Handle:
        return _Done(fn(*args))

    def set_ingesting(self, ingesting: bool) -> None:
        """The caller starts (True) or ends (False) work of its own on this machine's cores."""
        return None

    def poll(self) -> None:
        """Start what may start now (called by the caller between pieces of its own work)."""
        return None

    def close(self) -> None:
        return None

    def abort(self) -> None:
        """Close after an error: queued tasks are dropped (running ones stopped if possible)."""
        self.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, exc_type: object, *exc: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


RAY_MISSING = "the Ray engine needs `pip install 'snapaudit[ray]'`"


def ray_module() -> Any:
    try:
        import ray
    except ImportError as exc:
        raise BackendError(RAY_MISSING) from exc
    return ray


def ray_connect(address: str | None, workers: int) -> bool:
    """Connect to ``address`` (or start a local Ray with ``workers`` CPUs); True if we started
    it (and so shut it down at the end)."""
    ray = ray_module()
    if ray.is_initialized():
        return False
    kwargs: dict[str, Any] = {"log_to_driver": False, "logging_level": "ERROR",
                              "configure_logging": False}
    if address:
        ray.init(address=address, **kwargs)
    else:
        ray.init(num_cpus=workers, include_dashboard=False, **kwargs)
    return True
