"""The HTTP search backend against a loopback aiohttp server run in a thread."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from typing import Any

import pytest
from aiohttp import web

from snapaudit.errors import BackendError, NotFoundError, TransportInvalid
from snapaudit.systems.base import Evidence
from snapaudit.testbed.retrieval.base import Hit
from snapaudit.testbed.retrieval.config import HttpRetrieverConfig, TestbedConfig
from snapaudit.testbed.retrieval.evidence import EvidenceBuilder
from snapaudit.testbed.retrieval.http import HttpRetriever, json_path

DOCS = [{"doc": {"key": f"w{i}", "meta": {"link": f"https://w/{i}"}}, "body": f"text {i}"}
        for i in range(10)]


class Server:
    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    async def _handle(self, request: web.Request) -> web.Response:
        if request.method == "POST":
            params = await request.json()
        else:
            params = dict(request.query)
        self.requests.append({"method": request.method, "path": request.path, **params})
        if request.path == "/fail":
            return web.Response(status=503)
        if request.path == "/missing":
            return web.Response(status=404)
        if request.path == "/garbage":
            return web.Response(text="not json")
        k = int(params["n"])
        return web.json_response({"data": {"hits": DOCS[:k]}})

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        app = web.Application()
        app.router.add_route("*", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app)
        self._loop.run_until_complete(self._runner.setup())
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        self._loop.run_until_complete(site.start())
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self._ready.set()
        self._loop.run_forever()
        self._loop.run_until_complete(self._runner.cleanup())
        self._loop.close()

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(10)

    def stop(self) -> None:
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


def _search(ret: HttpRetriever, query: str, prefix: int, k: int) -> list[Hit]:
    """One awaited search; the retriever's session is closed after it."""
    async def go() -> list[Hit]:
        try:
            return await ret.asearch(query, prefix, k)
        finally:
            await ret.aclose()
    return asyncio.run(go())


def _ev(builder: EvidenceBuilder, qid: str, question: str, state: str) -> Evidence | None:
    async def go() -> Evidence | None:
        try:
            return await builder.evidence(qid, question, state)
        finally:
            await builder.aclose()
    return asyncio.run(go())


@pytest.fixture()
def server() -> Iterator[Server]:
    srv = Server()
    srv.start()
    yield srv
    srv.stop()


def _config(server: Server, path: str = "/search", **kw: Any) -> HttpRetrieverConfig:
    return HttpRetrieverConfig(url=f"http://127.0.0.1:{server.port}{path}",
                           query_param="q", k_param="n", results_path="data.hits",
                           id_path="doc.key", url_path="doc.meta.link", text_path="body", **kw)


@pytest.mark.parametrize("method", ["GET", "POST"])
def test_search_maps_results_by_json_paths(server: Server, method: str) -> None:
    ret = HttpRetriever(_config(server, method=method, prefix_param="shards"))
    hits = _search(ret, "who? & what", 3, 4)
    assert [h.doc_id for h in hits] == ["w0", "w1", "w2", "w3"]
    assert ret.document("w2").url == "https://w/2" and ret.document("w2").text == "text 2"
    req = server.requests[-1]
    assert req["method"] == method and req["q"] == "who? & what"
    assert str(req["n"]) == "4" and str(req["shards"]) == "3"


def test_evidence_over_http(server: Server) -> None:
    tb = TestbedConfig(states={"n0": 0, "n7": 7}, top_k=2, retriever=_config(server))
    ev = _ev(EvidenceBuilder(tb, None), "q", "x", "n7")
    assert ev is not None and ev.doc_ids == ("w0", "w1")
    assert ev.rendered == ("[1] id: w0\nurl: https://w/0\ntext 0\n\n"
                           "[2] id: w1\nurl: https://w/1\ntext 1")
    assert "prefix" not in json.dumps(server.requests[-1])


def test_failures_are_classified(server: Server) -> None:
    with pytest.raises(TransportInvalid, match="http_503"):
        _search(HttpRetriever(_config(server, "/fail")), "q", 1, 2)
    with pytest.raises(NotFoundError, match="404"):
        _search(HttpRetriever(_config(server, "/missing")), "q", 1, 2)
    with pytest.raises(TransportInvalid, match="malformed_json"):
        _search(HttpRetriever(_config(server, "/garbage")), "q", 1, 2)
    bad_paths = _config(server).model_copy(update={"results_path": "data.nope"})
    with pytest.raises(TransportInvalid, match="schema"):
        _search(HttpRetriever(bad_paths), "q", 1, 2)
    assert issubclass(NotFoundError, BackendError)


def test_json_path() -> None:
    value = {"a": [{"b": 1}, {"b": {"c": "x"}}]}
    assert json_path(value, "a.1.b.c") == "x" and json_path(value, "") == value
    with pytest.raises(KeyError):
        json_path(value, "a.5.b")


def test_connection_refused_is_retryable() -> None:
    import socket

    with socket.socket() as s:  # a port nobody listens on once closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = HttpRetrieverConfig(url=f"http://127.0.0.1:{port}/", timeout_s=2)
    with pytest.raises(TransportInvalid, match="connection"):
        _search(HttpRetriever(cfg), "q", 1, 2)
