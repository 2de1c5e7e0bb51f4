"""The review server over HTTP: the token, the Host check, bounded JSON bodies, the status
of each library error, and the JSON the page reads."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from snapaudit.errors import ConfigError
from snapaudit.review.handlers import MAX_BODY, ReviewServer
from snapaudit.review.page import CSP
from snapaudit.review.server import ReviewConfig, open_review
from tests.fakes.review_session import FakeSession
from tests.review.conftest import post, raw, serve

ROUTES = [("GET", "/"), ("GET", "/api/items"), ("GET", "/api/progress"),
          ("POST", "/api/labels"), ("POST", "/api/decisions"), ("POST", "/api/finish"),
          ("GET", "/nowhere"), ("PUT", "/api/labels"), ("DELETE", "/"), ("OPTIONS", "/")]
LABELS_Q2 = {"A|B": "same", "A|C": "different", "A|D": "different", "B|C": "different",
             "B|D": "different", "C|D": "same"}


@pytest.mark.parametrize(("method", "path"), ROUTES)
def test_every_route_refuses_a_request_without_the_token(server: ReviewServer, method: str,
                                                         path: str) -> None:
    body = b"{}" if method == "POST" else None
    status, _, value = raw(server, method, path, body, token=False)
    assert status == 403
    assert "token" in value["error"]
    wrong = raw(server, method, path, body, {"X-Review-Token": "x" + server.token.value},
                token=False)
    assert wrong[0] == 403
    cookie = f"{server.token.cookie_name(server.port + 1)}={server.token.value}"
    assert raw(server, method, path, body, {"Cookie": cookie}, token=False)[0] == 403


@pytest.mark.parametrize("host", ["evil.example:{port}", "127.0.0.1:1", "localhost", "",
                                  "127.0.0.1:{port}.evil.example"])
def test_a_foreign_host_header_is_refused(server: ReviewServer, host: str) -> None:
    for method, path in ROUTES:
        body = b"{}" if method == "POST" else None
        status, _, value = raw(server, method, path, body, host=host.format(port=server.port))
        assert status == 403, (method, path)
        assert value["error"] == "unknown Host header"


def test_the_page_takes_the_token_from_the_url_then_the_cookie(server: ReviewServer) -> None:
    status, headers, page = raw(server, "GET", f"/?token={server.token.value}", token=False,
                                host=f"localhost:{server.port}")
    assert status == 200
    assert headers["content-security-policy"] == CSP
    assert "default-src 'none'" in CSP and "connect-src 'self'" in CSP
    assert headers["x-frame-options"] == "DENY" and headers["cache-control"] == "no-store"
    cookie = headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie
    assert page.count("<script>") == 1
    assert re.search(r"\son[a-z]+=", page.split("<script>")[0], re.IGNORECASE) is None
    jar = cookie.split(";", 1)[0]
    assert raw(server, "GET", "/api/items", None, {"Cookie": jar}, token=False)[0] == 200
    # the URL's token opens the page only, not the API
    assert raw(server, "GET", f"/api/items?token={server.token.value}", token=False)[0] == 403


def test_a_refused_body_is_never_read_as_the_next_request(server: ReviewServer) -> None:
    # kept alive, an unread body would be parsed as the next request's first line
    for headers, token in (({}, False), ({"Content-Type": "text/plain"}, True)):
        status, sent, _ = raw(server, "POST", "/api/nowhere" if token else _route(server),
                              b"GET / HTTP/1.1", headers, token=token)
        assert status in (403, 404) and sent.get("connection") == "close"


def test_an_oversize_body_is_refused_with_413(server: ReviewServer) -> None:
    big = json.dumps({"question_id": "q001", "note": "x" * MAX_BODY}).encode()
    status, headers, value = raw(server, "POST", _route(server), big)
    assert status == 413 and "bytes" in value["error"]
    assert headers.get("connection") == "close"
    # a body that claims more than the limit is refused before it is read
    assert raw(server, "POST", _route(server), b"{}",
               {"Content-Length": str(MAX_BODY + 1)})[0] == 413


def _route(server: ReviewServer) -> str:
    """A POST route the server's mode serves."""
    return "/api/labels" if server.data.mode == "label" else "/api/decisions"


@pytest.mark.parametrize("body", [b"{", b"\xff\xfe", b"[1, 2]", b'"text"', b"nul"])
def test_a_body_that_is_not_a_json_object_is_400(server: ReviewServer, body: bytes) -> None:
    status, _, value = raw(server, "POST", _route(server), body)
    assert status == 400
    assert "JSON" in value["error"]


def test_a_body_that_is_not_declared_json_is_415(server: ReviewServer) -> None:
    status, _, _ = raw(server, "POST", _route(server), b"{}", {"Content-Type": "text/plain"})
    assert status == 415


def test_label_saves_and_the_library_errors_map_to_400_and_409(session: FakeSession) -> None:
    server = serve(session, label=True)
    try:
        status, _, items = raw(server, "GET", "/api/items")
        assert status == 200 and items["mode"] == "label"
        assert [i["question_id"] for i in items["items"]] == ["q001", "q002"]
        assert items["items"][1]["pairs"] == list(LABELS_Q2)
        assert set(items["items"][0]) == {"question_id", "question", "answers", "pairs",
                                          "saved"}
        missing = dict(list(LABELS_Q2.items())[:5])
        status, _, value = post(server, "/api/labels", {"question_id": "q002",
                                                        "labels": missing})
        assert (status, value["error"]) == (400, "q002: pair C|D has no label")
        assert post(server, "/api/labels", {"question_id": "q002",
                                            "labels": {**LABELS_Q2, "C|D": "maybe"}})[0] == 400
        status, _, value = post(server, "/api/labels", {"question_id": "q002",
                                                        "labels": LABELS_Q2})
        assert status == 200
        assert value["item"]["saved"] == LABELS_Q2
        assert value["progress"]["labelled"] == 1 and value["progress"]["label_total"] == 2
        assert post(server, "/api/labels", {"question_id": "q002",
                                            "labels": LABELS_Q2})[0] == 200  # the same again
        changed = {**LABELS_Q2, "A|B": "different"}
        status, _, value = post(server, "/api/labels", {"question_id": "q002",
                                                        "labels": changed})
        assert (status, value["error"]) == (409, "q002: labels already accepted")
        assert post(server, "/api/labels", {"labels": LABELS_Q2})[0] == 400
        # a grouping gives the same labels: saving it again is the identical no-op
        status, _, value = post(server, "/api/groups", {"question_id": "q002",
                                                        "groups": [["A", "B"], ["C", "D"]]})
        assert status == 200 and value["item"]["saved"] == LABELS_Q2
        for bad in ([], [[]], [["A"], "B"], {"A": 1}):
            assert post(server, "/api/groups", {"question_id": "q002", "groups": bad})[:1] \
                == (400,), bad
        assert post(server, "/api/finish", {})[1:] and session.locked
        status, _, value = post(server, "/api/labels", {"question_id": "q001",
                                                        "labels": {"A|B": "same"}})
        assert (status, value["error"]) == (409, "the labels of ann are locked")
        assert raw(server, "GET", "/api/progress")[2]["labels_locked"] is True
        # label mode serves no change item (it would show states and gold)
        status, _, value = post(server, "/api/decisions", {"question_id": "q001"})
        assert (status, value["error"]) == (404, "/api/decisions is not served in label mode")
    finally:
        server.shutdown()
        server.close()
    assert session.closed


def test_decisions_need_the_shown_hash(session: FakeSession) -> None:
    server = serve(session, label=False)
    try:
        item = raw(server, "GET", "/api/items")[2]["items"][0]
        assert item["old"] == [{"text": "Ann", "count": 2}]
        assert item["new"] == [{"text": "Bob", "count": 1}, {"text": "Ann", "count": 1}]
        assert item["diff"] is None  # short answers: no diff
        body = {"question_id": "q001", "decision": "regression", "note": "worse",
                "shown_sha256": item["shown_sha256"]}
        assert post(server, "/api/decisions", {**body, "decision": "bad"})[0] == 400
        assert post(server, "/api/decisions", {**body, "note": 3})[0] == 400
        status, _, value = post(server, "/api/decisions", {**body, "shown_sha256": "0" * 64})
        assert (status, value["error"]) == (409, "q001: what was shown has changed")
        status, _, value = post(server, "/api/decisions", {**body, "question_id": "q404"})
        assert (status, value["error"]) == (400, "question 'q404' is not a changed question")
        status, _, value = post(server, "/api/decisions", body)
        assert status == 200
        assert value["item"]["decision"]["decision"] == "regression"
        assert value["item"]["decision"]["note"] == "worse"
        assert value["progress"]["reviewed"] == 1 and value["progress"]["changed"] == 2
        for path in ("/api/labels", "/api/groups", "/api/finish"):
            assert post(server, path, {})[:1] == (404,)
        assert not session.locked
    finally:
        server.shutdown()
        server.close()


def test_untrusted_strings_reach_the_page_with_bidi_controls_shown() -> None:
    session = FakeSession({"q\u202e1": ("who\u202e?", ["a\u2066b"], ["c\x1bd"])})
    server = serve(session, label=False)
    try:
        item = raw(server, "GET", "/api/items")[2]["items"][0]
    finally:
        server.shutdown()
        server.close()
    assert item["question_id"] == "q\\u202e1" and item["question"] == "who\\u202e?"
    assert item["old"][0]["text"] == "a\\u2066b" and item["new"][0]["text"] == "c\\x1bd"


@pytest.mark.parametrize(("config", "message"), [
    (ReviewConfig(Path("r"), "../x"), "--annotator '../x' may only use"),
    (ReviewConfig(Path("r"), "ann", sample=3), "--sample applies to --label only"),
    (ReviewConfig(Path("r"), "ann", label=True, sample=0), "--sample 0: must be at least 1"),
])
def test_a_bad_config_is_refused_before_anything_opens(config: ReviewConfig,
                                                       message: str) -> None:
    opened: list[str] = []

    def opener(run: object, annotator: str, sample: int | None) -> FakeSession:
        opened.append(annotator)
        return FakeSession({})

    with pytest.raises(ConfigError, match=message.replace("(", r"\(")):
        open_review(config, opener)
    assert opened == []


def test_a_taken_port_is_a_config_error_and_closes_the_session(session: FakeSession) -> None:
    server = serve(session, label=False)
    other = FakeSession({})
    try:
        with pytest.raises(ConfigError, match=f"--port {server.port}: cannot listen"):
            open_review(ReviewConfig(Path("r"), "ann", port=server.port), lambda *a: other)
    finally:
        server.shutdown()
        server.close()
    assert other.closed


def test_an_unexpected_error_is_one_line_and_500(session: FakeSession,
                                                 capfd: pytest.CaptureFixture[str]) -> None:
    server = serve(session, label=False)
    try:
        session.broken = RuntimeError("disk on fire")
        status, _, value = raw(server, "GET", "/api/progress")
        session.broken = None
        assert raw(server, "GET", "/api/progress")[0] == 200  # the server lives on
    finally:
        server.shutdown()
        server.close()
    assert (status, value) == (500, {"error": "internal error: RuntimeError: disk on fire"})
    out, err = capfd.readouterr()
    assert out == "" and err == ""  # nothing printed
