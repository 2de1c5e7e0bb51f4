"""Where corpus build tasks run (``--engine``): in this process, a local process pool, or a Ray
cluster. (The build's task executor; the audit's stage engine is :mod:`snapaudit.run.engine`.)

Every engine runs the same picklable task functions with the same arguments, and the build
only ever reads their results in submission order, so the output is byte-identical whatever
the engine and worker count. Ray is optional (``pip install 'snapaudit[ray]'``); with Ray,
the corpus directory must be on a filesystem every Ray worker sees (one machine, or a shared
mount), since tasks read shard files and write index files there.

While the caller ingests (:meth:`Engine.set_ingesting`), an engine whose workers share this
machine's cores with it (the local pool; a Ray instance it started) runs at most one task
fewer than the free cores at once, so the ingesting process keeps a core: on 2 cores, one
task runs beside ingest and two after it. (Three busy processes on two cores cost each other
cache and about 8% more CPU in all at 10^6 documents.) Which tasks run when never changes the
output.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from snapaudit.errors import ConfigError
from snapaudit.testbed.corpus.executor_base import Engine, Handle, ingest_limit, ray_module

__all__ = ["ENGINES", "Engine", "Handle", "PoolEngine", "RayEngine", "open_engine",
           "ray_in_process"]

ENGINES = ("local", "ray")


class PoolEngine(Engine):
    """A local pool of ``workers`` processes (:mod:`snapaudit.testbed.corpus.workers`: fresh
    interpreters that do not re-run the caller's ``__main__``, so no main guard is needed),
    every one waited for when the engine closes."""

    def __init__(self, workers: int):
        from snapaudit.testbed.corpus.workers import WorkerPool

        self.workers = workers
        self._pool = WorkerPool(workers)

    def submit(self, fn: Callable[..., Any], *args: Any) -> Handle:
        return self._pool.submit(fn, *args)

    def set_ingesting(self, ingesting: bool) -> None:
        self._pool.set_limit(ingest_limit(self.workers) if ingesting else self.workers)

    def close(self) -> None:
        self._pool.close()

    def abort(self) -> None:
        self._pool.close(kill=True)


class _RayHandle:
    def __init__(self, ray: Any, ref: Any):
        self.ray, self.ref = ray, ref

    def result(self) -> Any:
        return self.ray.get(self.ref)


def ray_in_process() -> bool:
    """Whether this process already has a Ray session (without importing Ray)."""
    ray = sys.modules.get("ray")
    return ray is not None and bool(ray.is_initialized())


class RayEngine(Engine):
    """Ray tasks (``ray.remote``) on the Ray session this process already has (a caller's
    ``ray.init``); otherwise :func:`open_engine` drives Ray from a process of its own
    (:mod:`snapaudit.testbed.corpus.ray_process`)."""

    def __init__(self, workers: int):
        self.workers = workers
        self._ray = ray_module()
        self._remote: dict[Callable[..., Any], Any] = {}

    def submit(self, fn: Callable[..., Any], *args: Any) -> Handle:
        if fn not in self._remote:
            self._remote[fn] = self._ray.remote(num_cpus=1)(fn)
        return _RayHandle(self._ray, self._remote[fn].remote(*args))


def open_engine(engine: str = "local", workers: int = 1, address: str | None = None) -> Engine:
    if workers < 1:
        raise ConfigError("--workers must be at least 1")
    if engine == "local":
        if address:
            raise ConfigError("--address is for --engine ray")
        return Engine() if workers == 1 else PoolEngine(workers)
    if engine == "ray":
        if ray_in_process():
            if address:
                raise ConfigError("--address: this process is already connected to Ray")
            return RayEngine(workers)
        from snapaudit.testbed.corpus.ray_process import RayProcessEngine

        return RayProcessEngine(workers, address)
    raise ConfigError(f"unknown engine {engine!r} (known: {', '.join(ENGINES)})")
