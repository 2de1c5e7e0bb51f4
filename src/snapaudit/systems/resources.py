"""What the systems and the judge of one run share, owned by the run and closed with it.

A :class:`RunResources` holds the run's secrets (:class:`~snapaudit.systems.redact.Secrets`),
the replica pools of ``[run] replicas`` (one
:class:`~snapaudit.systems.replicas.ReplicaPool` per configured endpoint URL, so the health of
a replica is shared by every caller of that endpoint in the run) and instances shared by key
(one local model loaded once for every state and the judge with the same generator config).
The run that creates it closes it in a ``finally`` (``async with`` or :meth:`aclose`): the
shared instances are closed and the pools forgotten. Nothing lives in module globals, so two
runs in one process share nothing unless they are given the same ``RunResources``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from types import TracebackType
from typing import Protocol, TypeVar

from snapaudit.systems.redact import Secrets
from snapaudit.systems.replicas import ReplicaPool


class Closeable(Protocol):
    async def aclose(self) -> None: ...


C = TypeVar("C", bound=Closeable)


class RunResources:
    """The replica pools and shared instances of one run (see the module doc)."""

    def __init__(self, replicas: Mapping[str, Sequence[str]] | None = None, *,
                 fail_threshold: int = 3, rest_s: float = 5.0) -> None:
        # configured URL -> its other replicas' base URLs
        self.fleets = {url.rstrip("/"): tuple(more) for url, more in (replicas or {}).items()}
        self.fail_threshold = fail_threshold
        self.rest_s = rest_s
        self._pools: dict[str, ReplicaPool] = {}
        self._shared: dict[str, Closeable] = {}
        self._lock = threading.RLock()  # a shared build may ask for a pool
        self.closed = False
        # the secrets this run read (API keys, auth tokens): masked by its clients and in
        # what the run records (snapaudit.systems.redact)
        self.secrets = Secrets()

    def pool_for(self, url: str) -> ReplicaPool:
        """The pool of the endpoint configured as ``url`` (just ``url`` without replicas)."""
        key = url.rstrip("/")
        with self._lock:
            pool = self._pools.get(key)
            if pool is None:
                pool = ReplicaPool([url, *self.fleets.get(key, ())],
                                   fail_threshold=self.fail_threshold, rest_s=self.rest_s)
                self._pools[key] = pool
            return pool

    def shared(self, key: str, build: Callable[[], C]) -> C:
        """The instance shared under ``key`` (``build()`` on first use), closed with the run."""
        with self._lock:
            if self.closed:
                raise RuntimeError("these run resources are closed (their run has ended)")
            item = self._shared.get(key)
            if item is None:
                item = self._shared[key] = build()
            return item  # type: ignore[return-value]

    def __len__(self) -> int:
        """Pools and shared instances alive (0 once closed)."""
        return len(self._pools) + len(self._shared)

    async def aclose(self) -> None:
        """Close every shared instance and forget the pools (idempotent)."""
        with self._lock:
            self.closed = True
            items = list(self._shared.values())
            self._shared.clear()
            self._pools.clear()
        for item in items:
            await item.aclose()

    async def __aenter__(self) -> RunResources:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.aclose()
