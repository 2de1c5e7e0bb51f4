"""A review server over the in-memory session (tests/fakes/review_session.py), serving in a
thread; ``request`` sends raw HTTP so Host, token and body can each be wrong."""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from snapaudit.review.server import ReviewConfig, ReviewServer, open_review
from tests.fakes.review_session import FakeSession

QUESTIONS = {
    "q001": ("who wrote it?", ["Ann", "Ann"], ["Bob", "Ann"]),
    "q002": ("when?", ["1990", "1990"], ["1991", "1991"]),
}

Reply = tuple[int, dict[str, str], Any]
Request = Callable[..., Reply]


def serve(session: FakeSession, *, label: bool) -> ReviewServer:
    config = ReviewConfig(Path("run"), session.annotator, label=label)
    server = open_review(config, lambda run, annotator, sample: session)
    threading.Thread(target=server.serve_forever, args=(0.02,), daemon=True).start()
    return server


@pytest.fixture()
def session() -> FakeSession:
    return FakeSession(QUESTIONS)


@pytest.fixture(params=["label", "change"])
def server(request: pytest.FixtureRequest, session: FakeSession) -> Iterator[ReviewServer]:
    srv = serve(session, label=request.param == "label")
    yield srv
    srv.shutdown()
    srv.close()


def raw(server: ReviewServer, method: str, path: str, body: bytes | None = None,
        headers: dict[str, str] | None = None, *, token: bool = True,
        host: str | None = None) -> Reply:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host if host is not None else f"127.0.0.1:{server.port}")
        sent = {"Content-Type": "application/json", **(headers or {})}
        if token:
            sent["X-Review-Token"] = server.token.value
        if body is not None:
            sent.setdefault("Content-Length", str(len(body)))
        for k, v in sent.items():
            conn.putheader(k, v)
        conn.endheaders()
        if body is not None:
            conn.send(body)
        resp = conn.getresponse()
        data = resp.read()
        kind = resp.getheader("Content-Type", "")
        value: Any = json.loads(data) if kind == "application/json" else data.decode()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, value
    finally:
        conn.close()


def post(server: ReviewServer, path: str, value: Any, **kw: Any) -> Reply:
    return raw(server, "POST", path, json.dumps(value).encode(), **kw)
