"""HTTP search API backend: one request per query, results mapped by JSON paths.

``GET url?query=...&k=...`` or ``POST url`` with the JSON body ``{"query": ..., "k": ...}``
(parameter names configurable; ``prefix_param`` optionally sends the state's shard count).
The response is JSON; ``results_path`` names the list of results and ``id_path``,
``url_path``, ``text_path`` the fields of one result. A path is dot-separated keys, where a
part made of digits indexes a list (``data.hits``, ``doc.meta.url``, ``items.0.id``); an empty
path is the value itself. The service's order is kept (it owns ranking and tie-breaks).

Calls go through the one async client (:class:`snapaudit.systems.transport.HttpClient`), so
a retrieval waiting on the service never blocks the event loop, and failures have the
reasons of every other HTTP call (:mod:`snapaudit.systems.failure`): connection failures,
timeouts, 408/409/425/429 and 5xx, bodies that are not JSON (``malformed_json``) or lack a
configured path (``schema``) raise :class:`~snapaudit.errors.TransportInvalid`
(retryable); other 4xx raise BackendError (404: NotFoundError).
"""

from __future__ import annotations

from typing import Any

from snapaudit.errors import ConfigError, TransportInvalid
from snapaudit.systems.failure import R
from snapaudit.systems.transport import HttpClient
from snapaudit.testbed.retrieval.base import Document, Hit
from snapaudit.testbed.retrieval.config import HttpRetrieverConfig as RetrieverConfig


def json_path(value: Any, path: str) -> Any:
    """Follow a dot-separated path (digits index lists); KeyError when it does not exist."""
    for part in path.split(".") if path else ():
        if isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        elif isinstance(value, dict) and part in value:
            value = value[part]
        else:
            raise KeyError(path)
    return value


class HttpRetriever:
    """A hosted search service as a retriever, called through the one async client."""

    def __init__(self, config: RetrieverConfig):
        if not config.url:
            raise ConfigError("retriever.url is required for kind = 'http'")
        self.config = config
        self.url: str = config.url
        self._docs: dict[str, Document] = {}
        self._client = HttpClient(timeout_s=config.timeout_s)

    def spec(self) -> dict[str, Any]:
        c = self.config
        return {"kind": "http", "url": c.url, "method": c.method, "query_param": c.query_param,
                "k_param": c.k_param, "prefix_param": c.prefix_param,
                "paths": [c.results_path, c.id_path, c.url_path, c.text_path]}

    async def _fetch(self, params: dict[str, Any]) -> Any:
        if self.config.method == "GET":
            return await self._client.request_json(
                "GET", self.url, {}, params={k: str(v) for k, v in params.items()})
        return await self._client.request_json("POST", self.url, {}, json=params)

    async def asearch(self, query: str, prefix: int, k: int) -> list[Hit]:
        c = self.config
        params: dict[str, Any] = {c.query_param: query, c.k_param: k}
        if c.prefix_param:
            params[c.prefix_param] = prefix
        body = await self._fetch(params)
        try:
            results = json_path(body, c.results_path)
            if not isinstance(results, list):
                raise KeyError(c.results_path)
            docs = [Document(str(json_path(r, c.id_path)), _opt(r, c.url_path),
                             str(json_path(r, c.text_path))) for r in results[:k]]
        except KeyError as exc:
            raise TransportInvalid(R.SCHEMA, detail=f"missing path {exc}") from exc
        hits = []
        for rank, doc in enumerate(docs):
            self._docs[doc.doc_id] = doc
            hits.append(Hit(doc.doc_id, float(len(docs) - rank)))
        return hits

    async def aclose(self) -> None:
        await self._client.aclose()

    def document(self, doc_id: str) -> Document:
        try:
            return self._docs[doc_id]
        except KeyError:
            raise KeyError(f"{doc_id} was not returned by a search of this retriever") from None


def _opt(result: Any, path: str) -> str:
    try:
        value = json_path(result, path)
    except KeyError:
        return ""
    return "" if value is None else str(value)
