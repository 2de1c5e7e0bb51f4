"""Replica fleets: one logical endpoint served by several base URLs.

Self-hosted model servers (vLLM, SGLang, llama.cpp server) are often run as several identical
replicas. A :class:`ReplicaPool` spreads calls over the healthy ones (fewest calls in flight,
ties in turn), rests a replica after ``fail_threshold`` consecutive retryable failures
(``rest_s``, doubling on each new rest up to ``rest_max_s``) and tries it again when its rest
is over. When every replica rests, the one whose rest ends first is used, so a run never stalls
and stays correct while at least one replica answers. The replica is an operational choice: it
is not part of a system's spec (the protocol hash) but is recorded in every attempt's meta
(``replica``) and in the detail of a failed attempt.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar
from urllib.parse import urlsplit, urlunsplit

from snapaudit.errors import TransportInvalid

T = TypeVar("T")


@dataclass
class Replica:
    """One base URL and its health."""

    url: str
    in_flight: int = 0
    failures: int = 0  # consecutive retryable failures
    rests: int = 0
    resting_until: float = 0.0
    served: int = 0


class ReplicaPool:
    """Chooses a replica per call and keeps their health (single event loop, no locks)."""

    def __init__(self, urls: Sequence[str], *, fail_threshold: int = 3, rest_s: float = 5.0,
                 rest_max_s: float = 120.0, clock: Callable[[], float] = time.monotonic):
        if not urls:
            raise ValueError("a replica pool needs at least one URL")
        self.replicas = [Replica(u) for u in dict.fromkeys(urls)]
        self.fail_threshold = fail_threshold
        self.rest_s = rest_s
        self.rest_max_s = rest_max_s
        self._clock = clock
        self._turn = 0

    def healthy(self) -> list[Replica]:
        now = self._clock()
        return [r for r in self.replicas if r.resting_until <= now]

    def acquire(self) -> Replica:
        """The replica for the next call (its in-flight count is raised)."""
        candidates = self.healthy()
        if not candidates:
            candidates = [min(self.replicas, key=lambda r: r.resting_until)]
        self._turn += 1
        n = len(self.replicas)
        pick = min(candidates, key=lambda r: (r.in_flight,
                                              (self.replicas.index(r) - self._turn) % n))
        pick.in_flight += 1
        return pick

    def release(self, replica: Replica, *, ok: bool | None) -> None:
        """End of a call: ``ok`` True (success), False (retryable failure), None (neither:
        the replica answered but the answer was refused for another reason)."""
        replica.in_flight -= 1
        if ok:
            replica.failures = 0
            replica.rests = 0
            replica.served += 1
        elif ok is False:
            replica.failures += 1
            if replica.failures >= self.fail_threshold:
                replica.rests += 1
                replica.failures = 0
                rest = min(self.rest_max_s, self.rest_s * 2 ** (replica.rests - 1))
                replica.resting_until = self._clock() + rest

    @property
    def urls(self) -> list[str]:
        return [r.url for r in self.replicas]


# The pools of a run's ``[run] replicas`` are its snapaudit.systems.resources.RunResources.


async def call_replica(pool: ReplicaPool, call: Callable[[str], Awaitable[T]]
                       ) -> tuple[str | None, T]:
    """``call(url)`` on the pool's next replica; (the replica's public URL when the pool has
    several, else None; the result). A retryable failure is charged to the replica and
    re-raised naming it."""
    replica = pool.acquire()
    try:
        result = await call(replica.url)
    except TransportInvalid as exc:
        pool.release(replica, ok=False)
        if len(pool.replicas) == 1:
            raise
        raise TransportInvalid(exc.reason, detail=f"replica {public(replica.url)}: {exc.detail}",
                               retry_after=exc.retry_after) from None
    except BaseException:
        pool.release(replica, ok=None)
        raise
    pool.release(replica, ok=True)
    return (public(replica.url) if len(pool.replicas) > 1 else None), result


def public(url: str) -> str:
    """``url`` without user info, query or fragment (what may be recorded)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))
