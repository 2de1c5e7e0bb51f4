"""A loopback fake LLM server: OpenAI-compatible and Anthropic-compatible, with faults.

    with FakeLLMServer(responder=lambda call: '{"answer": "Paris"}') as server:
        generator_config(backend="openai", base_url=server.openai_base_url, ...)
        generator_config(backend="anthropic", base_url=server.anthropic_base_url, ...)
        server.inject("429", "timeout")   # the next two requests fail, in this order
        server.calls                      # every request received (api, headers, body, ...)

``POST /v1/chat/completions`` answers a chat completion whose message content is
``responder(call)``; ``POST /v1/messages`` answers a message whose content is a
``tool_use`` block (input = the responder's JSON object) when the request offers
tools, else a text block. Usage is ``usage`` (prompt, completion tokens).

Faults (:data:`FAULTS`) are served FIFO to the next requests, whatever the API:
``429`` (with ``Retry-After: retry_after``), ``500``, ``503``, ``401``, ``timeout``
(answers after ``hang_s``), ``drop`` (closes the connection), ``malformed_json``
(a truncated body), ``bad_shape`` (JSON without choices/content), ``schema_violation``
(content ``{"reply": ...}``), ``oversized`` (a 600-byte answer), ``empty_answer``,
``not_json`` (plain-text content). When ``api_key`` is set, a request without that key
gets 401. ``accepts`` (a set of dialects, see :func:`dialect_of`) makes an OpenAI request
in any other dialect fail the way llama-cpp-python's server does (HTTP 500, a pydantic
validation message naming ``response_format``); ``honours`` (default: all accepted) are the
dialects whose reply is the responder's JSON, the others get plain text. The server runs
its own event loop in a thread, so sync code, async code and subprocesses can all call it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.loopback import LoopbackServer

FAULTS = ("429", "500", "503", "401", "timeout", "drop", "malformed_json", "bad_shape",
          "schema_violation", "oversized", "empty_answer", "not_json")
_CONTENT_FAULTS = {
    "schema_violation": '{"reply": "Paris"}',
    "oversized": json.dumps({"answer": "x" * 600}),
    "empty_answer": '{"answer": ""}',
    "not_json": "Paris",
}


@dataclass(frozen=True)
class LLMCall:
    """One request the server received."""

    api: str  # "openai" or "anthropic"
    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def system(self) -> str:
        if self.api == "anthropic":
            return str(self.body.get("system", ""))
        return "".join(m["content"] for m in self.body["messages"] if m["role"] == "system")

    @property
    def user(self) -> str:
        return "".join(m["content"] for m in self.body["messages"] if m["role"] == "user")


def default_responder(call: LLMCall) -> str:
    return '{"answer": "Paris"}'


@dataclass
class FakeLLMServer(LoopbackServer):
    responder: Callable[[LLMCall], str] = default_responder
    usage: tuple[int, int] = (12, 5)
    api_key: str | None = None
    retry_after: str = "7"
    hang_s: float = 2.0
    latency_s: float = 0.0
    calls: list[LLMCall] = field(default_factory=list)
    accepts: frozenset[str] | None = None
    honours: frozenset[str] | None = None
    faults_served: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        LoopbackServer.__init__(self)
        self._faults: deque[str] = deque()

    @property
    def openai_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def inject(self, *faults: str) -> None:
        """Serve these faults to the next requests, one each, in order."""
        unknown = [f for f in faults if f not in FAULTS]
        if unknown:
            raise ValueError(f"unknown faults {unknown}; known: {FAULTS}")
        self._faults.extend(faults)

    # ------------------------------------------------------------ handlers

    async def _handle_openai(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, "openai")

    async def _handle_anthropic(self, request: web.Request) -> web.StreamResponse:
        return await self._handle(request, "anthropic")

    async def _handle(self, request: web.Request, api: str) -> web.StreamResponse:
        body: dict[str, Any] = await request.json()
        call = LLMCall(api, dict(request.headers), body)
        self.calls.append(call)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if not self._authorized(call):
            return web.json_response({"error": {"message": "bad key"}}, status=401)
        fault = self._faults.popleft() if self._faults else None
        if fault is not None:
            self.faults_served[fault] += 1
            early = await self._transport_fault(request, fault)
            if early is not None:
                return early
        dialect = dialect_of(body) if api == "openai" else None
        if self.accepts is not None and dialect not in self.accepts:
            return web.json_response({"error": {"message": _VALIDATION, "type": "internal"}},
                                     status=500)
        if dialect is not None and self.honours is not None and dialect not in self.honours:
            return web.json_response(_openai(body, "The capital is Paris, I think.",
                                             self.usage))
        content = _CONTENT_FAULTS.get(fault or "") or self.responder(call)
        envelope = _openai if api == "openai" else _anthropic
        return web.json_response(envelope(body, content, self.usage))

    def _authorized(self, call: LLMCall) -> bool:
        if call.api == "anthropic" and "anthropic-version" not in call.headers:
            return False
        if self.api_key is None:
            return True
        if call.api == "openai":
            return call.headers.get("Authorization") == f"Bearer {self.api_key}"
        return call.headers.get("x-api-key") == self.api_key

    async def _transport_fault(self, request: web.Request, fault: str) -> web.StreamResponse | None:
        if fault in ("429", "500", "503", "401"):
            headers = {"Retry-After": self.retry_after} if fault == "429" else {}
            error = {"error": {"type": "fault", "message": f"injected {fault}"}}
            return web.json_response(error, status=int(fault), headers=headers)
        if fault == "timeout":
            assert self._stopping is not None
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stopping.wait(), self.hang_s)
            return None
        if fault == "drop":
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=200)
        if fault == "malformed_json":
            return web.Response(text='{"choices": [{"message": ', content_type="application/json")
        if fault == "bad_shape":
            return web.json_response({"object": "nothing useful"})
        return None

    # ------------------------------------------------------------ lifecycle

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._handle_openai)
        app.router.add_post("/v1/messages", self._handle_anthropic)


_VALIDATION = ("1 validation error:\n  {'type': 'literal_error', 'loc': ('body', "
               "'response_format', 'type'), 'msg': \"Input should be 'text' or "
               "'json_object'\", 'input': 'json_schema', 'ctx': {'expected': \"'text' or "
               "'json_object'\"}}")


def dialect_of(body: dict[str, Any]) -> str:
    """The structured-output dialect of an OpenAI request body ("text" when none)."""
    fmt = body.get("response_format")
    if isinstance(fmt, dict):
        if fmt.get("type") == "json_schema":
            return "json_schema"
        return "json_object_schema" if "schema" in fmt else "json_object"
    if "guided_json" in body:
        return "guided_json"
    return "ollama_format" if "format" in body else "text"


def _openai(body: dict[str, Any], content: str, usage: tuple[int, int]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "model": body.get("model", "fake"),
        "system_fingerprint": "fp_fake",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": "stop"}],
        "usage": {"prompt_tokens": usage[0], "completion_tokens": usage[1],
                  "total_tokens": usage[0] + usage[1]},
    }


def _anthropic(body: dict[str, Any], content: str, usage: tuple[int, int]) -> dict[str, Any]:
    tools = body.get("tools") or []
    try:
        parsed = json.loads(content)
    except ValueError:
        parsed = None
    if tools and isinstance(parsed, dict):
        block: dict[str, Any] = {"type": "tool_use", "id": "toolu_fake",
                                 "name": tools[0]["name"], "input": parsed}
        stop = "tool_use"
    else:
        block, stop = {"type": "text", "text": content}, "end_turn"
    return {
        "id": "msg_fake", "type": "message", "role": "assistant",
        "model": body.get("model", "fake"), "content": [block], "stop_reason": stop,
        "usage": {"input_tokens": usage[0], "output_tokens": usage[1]},
    }
