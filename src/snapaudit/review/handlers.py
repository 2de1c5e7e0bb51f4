"""The review app's HTTP handler: the token, the Host check, bounded JSON bodies, the routes.

Every request, whatever its path or method, is refused with 403 unless its ``Host`` header
names this server (``127.0.0.1:PORT`` or ``localhost:PORT``: a page of another site that
re-points a DNS name at 127.0.0.1 sends its own host name) and it carries the session token
(:mod:`snapaudit.review.token`). Then:

    GET  /                the page (the token may come in the URL's ``?token=`` here only)
    GET  /api/items       the items of the session's mode and the progress
    GET  /api/progress    the progress counts
    POST /api/labels      {"question_id", "labels": {"A|B": "same", ...}}   (label mode)
    POST /api/groups      {"question_id", "groups": [["A", "C"], ["B"], ...]} (label mode)
    POST /api/decisions   {"question_id", "decision", "note", "shown_sha256"}  (change mode)
    POST /api/finish      {} : the annotator's lock of their labels        (label mode)

POST bodies are JSON (``Content-Type: application/json``) of at most :data:`MAX_BODY` bytes
(413 above, 411 without a length, 415 for another type, 400 when not a JSON object of the
route's shape). Library errors: ConfigError and InputError -> 400, IntegrityError and
LockError -> 409, any other error 500, with ``{"error": message}``.
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from snapaudit.errors import ConfigError, InputError, IntegrityError, LockError, SnapauditError
from snapaudit.review.data import DECISIONS, LABELS, ReviewData
from snapaudit.review.token import HEADER, SessionToken

HOST = "127.0.0.1"
MAX_BODY = 64 * 1024
MAX_NOTE = 4000


class BadRequest(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class ReviewHandler(BaseHTTPRequestHandler):
    server: ReviewServer
    protocol_version = "HTTP/1.1"

    # ---- dispatch

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def do_HEAD(self) -> None:
        self._dispatch("HEAD")

    def do_OPTIONS(self) -> None:
        self._dispatch("OPTIONS")

    def _dispatch(self, method: str) -> None:
        self._read = False  # the body is read only on a route that takes one
        path = self.path.split("?", 1)[0]
        if not self._host_ok():
            self._json(403, {"error": "unknown Host header"})
            return
        if not self.server.token.carried(self.path, self.headers.get(HEADER),
                                         self.headers.get("Cookie"), self.server.port,
                                         query_ok=method == "GET" and path == "/"):
            self._json(403, {"error": "this session's token is required (use the URL "
                                      "`snapaudit review` printed)"})
            return
        try:
            self._route(method, path)
        except BadRequest as exc:
            self._json(exc.status, {"error": str(exc)})
        except (ConfigError, InputError) as exc:
            self._json(400, {"error": str(exc)})
        except (IntegrityError, LockError) as exc:
            self._json(409, {"error": str(exc)})
        except SnapauditError as exc:
            self._json(400, {"error": str(exc)})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the browser went away mid-answer
        except Exception as exc:  # a bug: one line for the page, never a traceback
            self._json(500, {"error": f"internal error: {type(exc).__name__}: {exc}"})

    def _route(self, method: str, path: str) -> None:
        data = self.server.data
        gets = {"/api/items": data.items, "/api/progress": data.progress}
        other = {"label": {"/api/decisions"},
                 "change": {"/api/labels", "/api/groups", "/api/finish"}}
        if path in other[data.mode]:  # label mode never shows states, answers by state or gold
            self._json(404, {"error": f"{path} is not served in {data.mode} mode"})
        elif method == "GET" and path == "/":
            self._page()
        elif method == "GET" and path in gets:
            self._json(200, gets[path]())
        elif method == "POST" and path == "/api/labels":
            body = self._body()
            self._json(200, data.save_labels(_str(body, "question_id"), _labels(body)))
        elif method == "POST" and path == "/api/groups":
            body = self._body()
            self._json(200, data.save_groups(_str(body, "question_id"), _groups(body)))
        elif method == "POST" and path == "/api/decisions":
            body = self._body()
            decision = _str(body, "decision")
            if decision not in DECISIONS:
                raise BadRequest(400, f"decision must be one of {', '.join(DECISIONS)}")
            note = body.get("note", "")
            if not isinstance(note, str) or len(note) > MAX_NOTE:
                raise BadRequest(400, f"note must be a string of at most {MAX_NOTE} characters")
            self._json(200, data.save_decision(_str(body, "question_id"), decision, note,
                                               _str(body, "shown_sha256")))
        elif method == "POST" and path == "/api/finish":
            self._body()
            self._json(200, data.finish_labels())
        elif path in {"/", *gets, "/api/labels", "/api/groups", "/api/decisions",
                      "/api/finish"}:
            self._json(405, {"error": f"{method} is not allowed on {path}"})
        else:
            self._json(404, {"error": f"no such page: {path}"})

    # ---- requests

    def _host_ok(self) -> bool:
        host = self.headers.get("Host", "")
        return host in self.server.allowed_hosts

    def _body(self) -> dict[str, Any]:
        length = self.headers.get("Content-Length")
        if length is None or not length.isdigit():
            raise BadRequest(411, "a Content-Length is required")
        size = int(length)
        if size > MAX_BODY:
            raise BadRequest(413, f"the body is over {MAX_BODY} bytes")
        kind = self.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
        raw = self.rfile.read(size)
        self._read = True
        if kind != "application/json":
            raise BadRequest(415, "the body must be application/json")
        try:
            value = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise BadRequest(400, "the body is not valid JSON") from None
        if not isinstance(value, dict):
            raise BadRequest(400, "the body must be a JSON object")
        return value

    # ---- responses

    def _headers(self, status: int, kind: str, length: int) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(length))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("X-Frame-Options", "DENY")
        self.send_header("Referrer-Policy", "no-referrer")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")

    def _json(self, status: int, value: Any) -> None:
        body = json.dumps(value, ensure_ascii=True).encode()
        self._headers(status, "application/json", len(body))
        if not self._read and self.headers.get("Content-Length", "0").strip() not in ("", "0"):
            # a body left unread would be taken for the next request on this connection
            self.close_connection = True
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _page(self) -> None:
        from snapaudit.review.page import CSP, page_html

        body = page_html(self.server.token.value, self.server.data.mode,
                         self.server.data.annotator).encode()
        self._headers(200, "text/html; charset=utf-8", len(body))
        self.send_header("Content-Security-Policy", CSP)
        self.send_header("Set-Cookie", self.server.token.set_cookie(self.server.port))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        return None  # library code never prints


def _str(body: dict[str, Any], key: str) -> str:
    value = body.get(key)
    if not isinstance(value, str) or not value:
        raise BadRequest(400, f"{key} must be a non-empty string")
    return value


def _groups(body: dict[str, Any]) -> list[list[str]]:
    groups = body.get("groups")
    if (not isinstance(groups, list) or not groups
            or not all(isinstance(g, list) and g and all(isinstance(i, str) for i in g)
                       for g in groups)):
        raise BadRequest(400, "groups must be a list of non-empty lists of items")
    return [list(g) for g in groups]


def _labels(body: dict[str, Any]) -> dict[str, str]:
    labels = body.get("labels")
    if not isinstance(labels, dict) or not labels:
        raise BadRequest(400, "labels must be an object of pair -> label")
    for pair, label in labels.items():
        if label not in LABELS:
            raise BadRequest(400, f"pair {pair}: label must be one of {', '.join(LABELS)}")
    return {str(k): str(v) for k, v in labels.items()}


class ReviewServer(ThreadingHTTPServer):
    daemon_threads = True
    # Several browsers may load the page at once; a burst of requests must not be refused.
    request_queue_size = 64

    def __init__(self, data: ReviewData, port: int = 0, token: SessionToken | None = None):
        self.data = data
        self.token = token or SessionToken()
        super().__init__((HOST, port), ReviewHandler)
        self.port = int(self.server_address[1])
        self.allowed_hosts = frozenset({f"{HOST}:{self.port}", f"localhost:{self.port}"})

    @property
    def url(self) -> str:
        """The URL to open, with the token (print it once)."""
        return f"http://{HOST}:{self.port}/?token={self.token.value}"

    def handle_error(self, request: Any, client_address: Any) -> None:
        return None  # a connection that broke mid-request: nothing to print (library code)

    def close(self) -> None:
        """Stop listening and close the session (after ``shutdown()`` if it was serving)."""
        try:
            self.server_close()
        finally:
            self.data.close()
