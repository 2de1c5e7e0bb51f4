"""A loopback OpenAI-compatible server for writing real promptfoo and lm-eval logs with faults.

    python examples/import/fake_openai.py [--port 0]    # prints "port N", serves until killed

``POST /v1/chat/completions`` answers from the seeded table (``table.py``): the question is
the one whose text the last user message contains, the model is ``old`` when the request's
``model`` contains "old" and ``new`` otherwise, and the answer is the table's for the n-th call
of that (model, question) the server received. :data:`FAULTS` makes some calls fail the way
real endpoints do: an empty or blank content, a null content (what a reasoning model that ran
out of tokens returns), or an HTTP 400 with an OpenAI-shaped error. Standard library only, so
it runs in whatever environment the tool lives in.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from table import QUESTIONS, answer  # noqa: E402

# (model, question id, n-th call) -> fault; "*" as n: every call
FAULTS: dict[tuple[str, str, int | str], str] = {
    ("new", "q2", 2): "empty",
    ("new", "q4", "*"): "blank",
    ("old", "q5", 1): "error",
    ("new", "q6", 3): "null",
}
_COUNTS: dict[tuple[str, str], int] = {}
_LOCK = threading.Lock()


def _question(messages: list[dict[str, Any]]) -> str:
    text = "".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")
    for qid, question, _gold, _wrong in QUESTIONS:
        if question in text:
            return qid
    raise KeyError(f"no known question in {text[:80]!r}")


def reply(body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """(status, JSON body) for one chat completion request."""
    model = "old" if "old" in str(body.get("model", "")) else "new"
    qid = _question(body.get("messages") or [])
    with _LOCK:
        n = _COUNTS[(model, qid)] = _COUNTS.get((model, qid), 0) + 1
    fault = FAULTS.get((model, qid, n)) or FAULTS.get((model, qid, "*"))
    if fault == "error":
        return 400, {"error": {"message": f"The model `{body.get('model')}` refused the "
                               "request: content filter triggered (fake)",
                               "type": "invalid_request_error", "code": "content_filter"}}
    content: str | None = {"empty": "", "blank": "  \n ", "null": None}.get(
        fault or "", answer(model, qid, n)[0])
    return 200, {"id": f"chatcmpl-{model}-{qid}-{n}", "object": "chat.completion",
                 "created": 0, "model": str(body.get("model", "")),
                 "choices": [{"index": 0, "finish_reason": "stop",
                              "message": {"role": "assistant", "content": content}}],
                 "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        size = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(size) or b"{}")
        if not self.path.rstrip("/").endswith("/chat/completions"):
            status, out = 404, {"error": {"message": f"no route {self.path}"}}
        else:
            status, out = reply(body)
        data = json.dumps(out).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=0)
    port = parser.parse_args().port
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    print(f"port {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
