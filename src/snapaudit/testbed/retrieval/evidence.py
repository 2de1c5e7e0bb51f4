"""Testbed evidence: retrieve top-k for a (question, state) and render it, cached on disk.

A state of corpus path j >= 1 (``[testbed.paths]``) searches the first p shards of path j's
order (:mod:`snapaudit.testbed.paths`); its cache key also names those shards. Two builders
on two initially empty cache directories are the two independent passes of the
retrieval lock; for the same corpus and config they give byte-identical evidence.
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from snapaudit.errors import ConfigError, IntegrityError
from snapaudit.hashing import canonical_json, sha256_json
from snapaudit.systems.base import Evidence
from snapaudit.testbed.render import render_evidence, render_spec
from snapaudit.testbed.retrieval.base import InProcessRetriever, Retriever
from snapaudit.testbed.retrieval.config import TestbedConfig

CACHE_VERSION = 1


class EvidenceBuilder:
    """Evidence of the built-in testbed for every state of ``testbed.states``.

    ``cache_dir`` (optional) holds one JSON file per (state, question); the retriever is
    opened lazily on the first cache miss.
    """

    def __init__(self, testbed: TestbedConfig, cache_dir: Path | None,
                 retriever: Retriever | None = None):
        self.testbed = testbed
        self.cache_dir = cache_dir
        self._retriever = retriever

    @property
    def retriever(self) -> Retriever:
        if self._retriever is None:
            from snapaudit.testbed.retrieval.registry import build_retriever

            self._retriever = build_retriever(self.testbed)
        return self._retriever

    def prefix(self, state: str) -> int:
        try:
            return self.testbed.states[state]
        except KeyError:
            known = ", ".join(sorted(self.testbed.states)) or "none"
            raise ConfigError(f"unknown testbed state {state!r} (known: {known})") from None

    def orders(self) -> tuple[tuple[int, ...], ...]:
        """The shard order of every corpus path (``[testbed.paths]``; path 0: 0, 1, ...)."""
        from snapaudit.testbed.paths import path_orders

        paths = self.testbed.paths
        assert paths is not None and paths.count > 1
        retriever = self.retriever
        if not isinstance(retriever, InProcessRetriever):
            raise ConfigError("testbed.paths needs bm25 or dense retrieval")
        return path_orders(retriever.n_shards, paths.count, paths.seed)

    def shards(self, state: str) -> tuple[int, ...] | None:
        """The shards a state of a corpus path other than path 0 searches (None: a prefix)."""
        from snapaudit.testbed.paths import path_of, state_shards

        if self.testbed.path_count == 1 or path_of(state)[0] == 0:
            return None
        return state_shards(state, self.prefix(state), self.orders())

    async def evidence(self, question_id: str, question: str, state: str) -> Evidence | None:
        """Ordered doc ids and rendered evidence; ``None`` for a 0-shard state."""
        prefix = self.prefix(state)
        if prefix == 0:
            return None
        key: dict[str, Any] = {"question_id": question_id, "question": question,
                               "state": state, "prefix": prefix}
        shards = self.shards(state)
        if shards is not None:
            key["shards"] = list(shards)
        path = self._cache_path(key)
        if path is not None and path.exists():
            return _read_cache(path, key)
        if shards is not None:
            retriever = self.retriever
            assert isinstance(retriever, InProcessRetriever)
            hits = await retriever.asearch_shards(question, shards, self.testbed.top_k)
        else:
            hits = await self.retriever.asearch(question, prefix, self.testbed.top_k)
        docs = [self.retriever.document(h.doc_id) for h in hits]
        rendered = render_evidence(docs, self.testbed.render)
        assert rendered is not None
        ev = Evidence(doc_ids=tuple(d.doc_id for d in docs), rendered=rendered)
        if path is not None:
            _write_cache(path, key, ev, [h.score for h in hits])
        return ev

    async def aclose(self) -> None:
        """Release the retriever's connections (a hosted search service's session)."""
        if self._retriever is not None:
            await self._retriever.aclose()

    def spec(self) -> dict[str, Any]:
        """Everything that shapes the evidence: backend, params, corpus hash, limits, k."""
        out = {
            "retriever": self.retriever.spec(),
            "render": render_spec(self.testbed.render),
            "top_k": self.testbed.top_k,
            "states": dict(sorted(self.testbed.states.items())),
        }
        if self.testbed.paths is not None and self.testbed.path_count > 1:
            out["paths"] = {"count": self.testbed.paths.count, "seed": self.testbed.paths.seed,
                            "orders": [list(o) for o in self.orders()]}
        return out

    def _cache_path(self, key: dict[str, Any]) -> Path | None:
        if self.cache_dir is None:
            return None
        state_dir = _safe_name(str(key["state"]))
        return self.cache_dir / state_dir / f"{sha256_json(key)}.json"


def _safe_name(state: str) -> str:
    ok = state and all(c.isalnum() or c in "-_." for c in state) and not state.startswith(".")
    return state if ok else "s-" + sha256_json(state)[:16]


def _write_cache(path: Path, key: dict[str, Any], ev: Evidence, scores: list[float]) -> None:
    record = {"schema_version": CACHE_VERSION, "key": key, "doc_ids": list(ev.doc_ids),
              "scores": scores, "rendered": ev.rendered}
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(canonical_json(record))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _read_cache(path: Path, key: dict[str, Any]) -> Evidence:
    try:
        record = json.loads(path.read_text(encoding="utf-8"))
        ok = record["schema_version"] == CACHE_VERSION and record["key"] == key
        ev = Evidence(doc_ids=tuple(str(d) for d in record["doc_ids"]),
                      rendered=str(record["rendered"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise IntegrityError(f"{path}: unreadable retrieval cache entry: {exc}") from exc
    if not ok:
        raise IntegrityError(f"{path}: retrieval cache entry does not match its key")
    return ev
