"""HTTP search API backend: one request per query, results mapped by JSON paths.

``GET url?query=...&k=...`` or ``POST url`` with the JSON body ``{"query": ..., "k": ...}``
(parameter names configurable; ``prefix_param`` optionally sends the state's shard count).
The response is JSON; ``results_path`` names the list of results and ``id_path``,
``url_path``, ``text_path`` the fields of one result. A path is dot-separated keys, where a
part made of digits indexes a list (``data.hits``, ``doc.meta.url``, ``items.0.id``); an empty
path is the value itself. The service's order is kept (it owns ranking and tie-breaks).

Connection failures, timeouts, 429 and 5xx, and unparseable or unmappable bodies raise
:class:`~snapaudit.errors.TransportInvalid` (retryable); other 4xx raise BackendError.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from snapaudit.errors import BackendError, ConfigError, TransportInvalid
from snapaudit.systems.bounded import DEFAULT_MAX_RESPONSE_BYTES, parse_json, read_body_sync
from snapaudit.systems.redact import redact
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
    """A hosted search service as a retriever."""

    def __init__(self, config: RetrieverConfig):
        if not config.url:
            raise ConfigError("retriever.url is required for kind = 'http'")
        self.config = config
        self._docs: dict[str, Document] = {}

    def spec(self) -> dict[str, Any]:
        c = self.config
        return {"kind": "http", "url": c.url, "method": c.method, "query_param": c.query_param,
                "k_param": c.k_param, "prefix_param": c.prefix_param,
                "paths": [c.results_path, c.id_path, c.url_path, c.text_path]}

    def _request(self, params: dict[str, Any]) -> urllib.request.Request:
        c = self.config
        assert c.url is not None
        if c.method == "GET":
            sep = "&" if urllib.parse.urlsplit(c.url).query else "?"
            return urllib.request.Request(c.url + sep + urllib.parse.urlencode(params))
        body = json.dumps(params).encode()
        return urllib.request.Request(c.url, data=body, method="POST",
                                      headers={"Content-Type": "application/json"})

    def _fetch(self, params: dict[str, Any]) -> Any:
        try:
            with urllib.request.urlopen(self._request(params),
                                        timeout=self.config.timeout_s) as resp:
                raw = read_body_sync(resp, DEFAULT_MAX_RESPONSE_BYTES)
        except urllib.error.HTTPError as exc:
            exc.close()
            if exc.code == 429 or exc.code >= 500:
                raise TransportInvalid(f"http {exc.code}", detail=str(self.config.url)) from exc
            raise BackendError(f"search API {self.config.url} answered {exc.code}") from exc
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise TransportInvalid("connection", detail=redact(str(exc))) from exc
        return parse_json(raw, "unparseable body")

    def search(self, query: str, prefix: int, k: int) -> list[Hit]:
        c = self.config
        params: dict[str, Any] = {c.query_param: query, c.k_param: k}
        if c.prefix_param:
            params[c.prefix_param] = prefix
        body = self._fetch(params)
        try:
            results = json_path(body, c.results_path)
            if not isinstance(results, list):
                raise KeyError(c.results_path)
            docs = [Document(str(json_path(r, c.id_path)), _opt(r, c.url_path),
                             str(json_path(r, c.text_path))) for r in results[:k]]
        except KeyError as exc:
            raise TransportInvalid("unmappable body", detail=f"missing path {exc}") from exc
        hits = []
        for rank, doc in enumerate(docs):
            self._docs[doc.doc_id] = doc
            hits.append(Hit(doc.doc_id, float(len(docs) - rank)))
        return hits

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
