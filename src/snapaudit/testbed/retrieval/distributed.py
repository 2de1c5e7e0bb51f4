"""Distributed exact BM25: shards served by local processes or Ray actors, merged exactly.

A query runs in two rounds. (1) Every server holding shards of the prefix returns their
document counts, total lengths and the document frequency of each query term; the client
sums them into the prefix's N, avgdl and idf (:class:`~snapaudit.testbed.retrieval.bm25.
PrefixStats`). (2) Every server scores its shards with those global values and returns each
shard's top k (all ties at the cut); the client merges by (score desc, id asc). Each document
gets the same float64 arithmetic, in the same term order, as in one index built on the prefix
alone, so the merged list is that index's top k, scores included. Many queries travel in one
message per server and round (:meth:`ShardedBm25.search_many`).

Servers: ``local`` with one worker answers in this process; ``local`` with N workers starts N
worker processes (:mod:`snapaudit.testbed.corpus.workers`, each waited for on close), shard j
served by process ``j mod N``; ``ray`` starts one actor per
worker the same way (``--address`` joins a running cluster, whose nodes must see the corpus
directory). Each server memory-maps only the shards it serves, when first asked.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from snapaudit.errors import BackendError, ConfigError
from snapaudit.testbed.corpus.workers import Worker
from snapaudit.testbed.retrieval.base import Hit
from snapaudit.testbed.retrieval.bm25 import (
    PrefixStats,
    merge_top,
    open_shards,
    query_terms,
    read_meta,
)
from snapaudit.testbed.retrieval.bm25_shard import ShardIndex, Terms

Stats = tuple[int, int, list[int]]
Scored = list[tuple[float, str]]


class ShardServer:
    """Answers stats and top-k requests for some shards of one corpus (many queries at once)."""

    def __init__(self, corpus_dir: str):
        self.dir = Path(corpus_dir)
        self.meta = read_meta(self.dir)
        self.index: dict[int, ShardIndex] = {}

    def _shard(self, j: int) -> ShardIndex:
        if j not in self.index:
            self.index.update(open_shards(self.dir, self.meta, range(j, j + 1)))
        return self.index[j]

    def stats(self, shards: list[int], queries: list[list[str]]) -> list[list[Stats]]:
        """Per query, per shard: (documents, total length, df of every term)."""
        return [[self._shard(j).stats(words) for j in shards] for words in queries]

    def top(self, shards: list[int], queries: list[tuple[Terms, list[float], float]],
            k1: float, b: float, k: int) -> list[list[Scored]]:
        """Per query, per shard: the shard's top k under the given global statistics."""
        return [[self._shard(j).top(terms, idfs, avgdl, k1, b, k) for j in shards]
                for terms, idfs, avgdl in queries]


_SERVED: dict[str, ShardServer] = {}  # in a worker process: its server, per corpus


def serve_call(corpus_dir: str, method: str, args: tuple[Any, ...]) -> Any:
    """Worker-process entry: ``method(*args)`` on this process's server of ``corpus_dir``."""
    server = _SERVED.get(corpus_dir)
    if server is None:
        server = _SERVED[corpus_dir] = ShardServer(corpus_dir)
    return getattr(server, method)(*args)


class _ProcessServer:
    """A worker process (:mod:`snapaudit.testbed.corpus.workers`) holding a ShardServer."""

    def __init__(self, corpus_dir: str):
        self.dir = corpus_dir
        self.worker = Worker()

    def call(self, method: str, *args: Any) -> Any:
        self.worker.send(serve_call, self.dir, method, args)
        return self

    def result(self) -> Any:
        try:
            return self.worker.receive()
        except BackendError:
            raise
        except Exception as exc:
            raise BackendError(f"shard server: {type(exc).__name__}: {exc}") from exc

    def close(self) -> None:
        self.worker.close()


class _InlineServer:
    def __init__(self, corpus_dir: str):
        self.server = ShardServer(corpus_dir)
        self.value: Any = None

    def call(self, method: str, *args: Any) -> Any:
        self.value = getattr(self.server, method)(*args)
        return self

    def result(self) -> Any:
        return self.value

    def close(self) -> None:
        return None


class _RayServer:
    def __init__(self, actor: Any):
        self.actor: Any = actor
        self.ref: Any = None

    def call(self, method: str, *args: Any) -> Any:
        self.ref = getattr(self.actor, method).remote(*args)
        return self

    def result(self) -> Any:
        import ray

        return ray.get(self.ref)

    def close(self) -> None:
        import ray

        ray.kill(self.actor)


class ShardedBm25:
    """Exact prefix BM25 over shard servers; the same hits as :class:`Bm25Retriever`."""

    def __init__(self, corpus_dir: str | Path, *, engine: str = "local", workers: int = 1,
                 address: str | None = None, k1: float = 0.9, b: float = 0.4):
        self.dir = Path(corpus_dir)
        self.k1, self.b = k1, b
        self.n_shards = len(read_meta(self.dir)["shards"])
        if workers < 1:
            raise ConfigError("--workers must be at least 1")
        self._owned_ray = False
        self.servers: list[Any] = self._start(engine, workers, address)

    def _start(self, engine: str, workers: int, address: str | None) -> list[Any]:
        if engine == "local":
            if workers == 1:
                return [_InlineServer(str(self.dir))]
            servers: list[Any] = []
            try:
                for _ in range(workers):
                    servers.append(_ProcessServer(str(self.dir)))
            except BaseException:
                for srv in servers:
                    srv.close()
                raise
            return servers
        if engine == "ray":
            from snapaudit.testbed.corpus.executor_base import ray_connect, ray_module

            ray = ray_module()
            self._owned_ray = ray_connect(address, workers)
            actor = ray.remote(num_cpus=0)(ShardServer)
            return [_RayServer(actor.remote(str(self.dir))) for _ in range(workers)]
        raise ConfigError(f"unknown engine {engine!r} (known: local, ray)")

    def _plan(self, prefix: int) -> list[tuple[Any, list[int]]]:
        if not 0 <= prefix <= self.n_shards:
            raise ConfigError(f"prefix {prefix} outside 0..{self.n_shards} shards")
        n = len(self.servers)
        plan = [(s, [j for j in range(prefix) if j % n == i]) for i, s in enumerate(self.servers)]
        return [(s, shards) for s, shards in plan if shards]

    def search(self, query: str, prefix: int, k: int) -> list[Hit]:
        return self.search_many([query], prefix, k)[0]

    def search_many(self, queries: list[str], prefix: int, k: int) -> list[list[Hit]]:
        plan = self._plan(prefix)
        terms = [query_terms(q) for q in queries]
        words = [[t for t, _ in ts] for ts in terms]
        pending = [s.call("stats", shards, words) for s, shards in plan]
        per_server = [p.result() for p in pending]
        stats = [PrefixStats(terms[q], [st for srv in per_server for st in srv[q]])
                 for q in range(len(queries))]
        asks = [(st.terms, st.idfs, st.avgdl) for st in stats]
        pending = [s.call("top", shards, asks, self.k1, self.b, k) for s, shards in plan]
        tops = [p.result() for p in pending]
        return [merge_top([lst for srv in tops for lst in srv[q]], k) if stats[q].terms else []
                for q in range(len(queries))]

    def close(self) -> None:
        for s in self.servers:
            s.close()
        if self._owned_ray:
            import ray

            ray.shutdown()

    def __enter__(self) -> ShardedBm25:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
