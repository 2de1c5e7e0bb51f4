"""A review server over the in-memory session (tests/fakes/review_session.py), serving in a
thread; ``request`` sends raw HTTP so Host, token and body can each be wrong."""

from __future__ import annotations

import http.client
import json
import re
import signal
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import pytest

from snapaudit.review.handlers import ReviewServer
from snapaudit.review.server import ReviewConfig, open_review
from snapaudit.review.token import SessionToken
from tests.fakes.review_session import FakeSession
from tests.helpers.cli import REPO, cli_popen

QUESTIONS = {
    "q001": ("who wrote it?", ["Ann", "Ann"], ["Bob", "Ann"]),
    "q002": ("when?", ["1990", "1990"], ["1991", "1991"]),
}

Reply = tuple[int, dict[str, str], Any]
Request = Callable[..., Reply]


def serve(session: FakeSession, *, label: bool) -> ReviewServer:
    config = ReviewConfig(Path("run"), session.annotator, label=label)
    server = open_review(config, lambda run, annotator, sample: session, update=None)
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


class Target(Protocol):
    """A server to send requests to: a ReviewServer in this process or an App."""

    port: int
    token: SessionToken


def raw(server: Target, method: str, path: str, body: bytes | None = None,
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


def post(server: Target, path: str, value: Any, **kw: Any) -> Reply:
    return raw(server, "POST", path, json.dumps(value).encode(), **kw)


# ---- real runs (a Python system, the rule judge: under a second to build) and the CLI app

def build_run(root: Path, target: str = "planted", n: int = 6,
              judge: str = 'kind = "rule"\nname = "rule"') -> Path:
    """A finished run (states old/new x 2 repeats, ``n`` questions, the rule judge, gold
    unlocked) whose answers are ``tests.fakes.review_answers:<target>``."""
    from snapaudit.progress import SilentProgress
    from snapaudit.run.engine import run_protocol_file
    from tests.helpers.protocol import python_protocol_text, save_protocol, write_world

    root.mkdir(parents=True, exist_ok=True)
    write_world(root, n=n)
    text = (python_protocol_text(f'target = "tests.fakes.review_answers:{target}"')
            .replace("size = 6", f"size = {n}") + f"\n[judge]\n{judge}\n")
    run_protocol_file(save_protocol(root, text), root / "run", [], SilentProgress())
    return root / "run"


URL = re.compile(r"http://127\.0\.0\.1:(\d+)/\?token=([A-Za-z0-9_-]+)")


class App:
    """``snapaudit review RUN ARGS --no-open`` in a child process; its URL from stdout."""

    def __init__(self, run: Path, *args: str) -> None:
        self.stderr = ""
        self.proc = cli_popen("review", str(run), "--no-open", *args, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, cwd=str(REPO))
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        found = URL.search(line)
        if found is None:
            self.stop()
            raise AssertionError(f"no URL in {line!r}; stderr: {self.stderr}")
        self.url, self.port = found.group(0), int(found.group(1))
        self.token = SessionToken(found.group(2))

    def saved(self) -> dict[str, Any]:
        """The annotator's accepted labels per question, as the server sends them."""
        status, _, items = raw(self, "GET", "/api/items")
        assert status == 200, items
        return {i["question_id"]: i["saved"] for i in items["items"]}

    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/"

    def stop(self, sig: int = signal.SIGINT) -> tuple[int, str, str]:
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
        out, err = self.proc.communicate(timeout=30)
        self.stderr = err
        return self.proc.returncode, out, err


@pytest.fixture()
def apps() -> Iterator[list[App]]:
    started: list[App] = []
    yield started
    for app in started:
        app.stop(signal.SIGKILL)
