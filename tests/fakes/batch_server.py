"""A loopback fake of the OpenAI Batch API and Anthropic Message Batches, with faults.

    with FakeBatchServer(responder=lambda call: '{"answer": "Paris"}') as server:
        generator_config(backend="openai", base_url=server.openai_base_url, ...)
        generator_config(backend="anthropic", base_url=server.anthropic_base_url, ...)
        server.submissions      # custom_id -> times it was part of a created batch
        server.batches          # every created batch, in order

OpenAI: ``POST /v1/files`` (multipart, purpose ``batch``), ``POST /v1/batches``,
``GET /v1/batches`` (newest first), ``GET /v1/batches/{id}``, ``GET /v1/files/{id}/content``.
Anthropic: ``POST /v1/messages/batches``, ``GET /v1/messages/batches`` (newest first),
``GET /v1/messages/batches/{id}``, ``GET /v1/messages/batches/{id}/results``.

A batch ends on its ``polls_to_end``-th GET, as planned by ``plan`` (one word per created
batch, in order; ``complete`` when the plan runs out): ``complete``, ``expire`` or
``cancel`` (the first half of its requests succeed, the rest expire or are cancelled), or
``vanish`` (the provider deleted it: every GET of it or of its results answers 404).
``request_errors = N``: the next N requests submitted fail inside their batch (HTTP 500 in
OpenAI's error file, ``errored`` in Anthropic's results); ``empty_answers = N``: the next N
succeed with the content ``{"answer": ""}``. ``lost_creates = N``: the next N create
calls make their batch but answer 500; ``poll_errors = N``: the next N GETs of a batch
answer 503. Results files list requests in
reverse order (a client must match by custom id). ``hold`` = ``upload``,
``create_before`` (before the batch exists), ``create_after`` (the batch exists, its id is
never answered) or ``poll`` makes that request hang and sets ``held``; :meth:`release`
lets it go (a request held *before* its effect then fails with 503 and changes nothing).
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from aiohttp import web

from tests.fakes.llm_server import LLMCall, _anthropic, _openai, default_responder
from tests.fakes.loopback import LoopbackServer

HOLDS = ("upload", "create_before", "create_after", "poll")


@dataclass
class FakeBatch:
    api: str
    id: str
    requests: list[tuple[str, dict[str, Any]]]  # (custom_id, body)
    errors: set[str]  # custom ids that fail
    empty: set[str]  # custom ids answered with an empty answer
    created_at: float
    metadata: dict[str, Any]
    plan: str = "complete"
    gets: int = 0
    status: str = "in_progress"

    @property
    def ended(self) -> bool:
        return self.status not in ("in_progress", "validating")


@dataclass
class FakeBatchServer(LoopbackServer):
    responder: Callable[[LLMCall], str] = default_responder
    usage: tuple[int, int] = (12, 5)
    polls_to_end: int = 1
    request_errors: int = 0
    empty_answers: int = 0
    lost_creates: int = 0
    poll_errors: int = 0
    plan: deque[str] = field(default_factory=deque)
    hold: str | None = None
    submissions: Counter[str] = field(default_factory=Counter)
    batches: list[FakeBatch] = field(default_factory=list)
    files: dict[str, bytes] = field(default_factory=dict)
    polls: int = 0

    client_max_size = 1024**3  # batch files and inline batches are large

    def __post_init__(self) -> None:
        LoopbackServer.__init__(self)
        self.held = threading.Event()
        self._release: asyncio.Event | None = None

    @property
    def openai_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def release(self) -> None:
        """Let held requests go (and hold nothing any more)."""
        self.hold = None
        if self._loop is not None and self._release is not None:
            self._loop.call_soon_threadsafe(self._release.set)

    async def _hold(self, point: str) -> bool:
        """Hang while ``hold == point``; True when the request was held."""
        if self.hold != point:
            return False
        if self._release is None:
            self._release = asyncio.Event()
        self.held.set()
        await self._release.wait()
        return True

    # ------------------------------------------------------------ shared

    def _create(self, api: str, requests: list[tuple[str, dict[str, Any]]],
                metadata: dict[str, Any]) -> FakeBatch:
        errors, empty = set(), set()
        for cid, _ in requests:
            self.submissions[cid] += 1
            if self.request_errors > 0:
                self.request_errors -= 1
                errors.add(cid)
            elif self.empty_answers > 0:
                self.empty_answers -= 1
                empty.add(cid)
        prefix = "batch_" if api == "openai" else "msgbatch_"
        batch = FakeBatch(api, f"{prefix}{len(self.batches) + 1:04d}", requests, errors, empty,
                          datetime.now(UTC).timestamp(), metadata,
                          self.plan.popleft() if self.plan else "complete")
        self.batches.append(batch)
        return batch

    def _get(self, batch_id: str) -> FakeBatch:
        for batch in self.batches:
            if batch.id == batch_id and batch.plan != "vanish":
                return batch
        raise web.HTTPNotFound(text=json.dumps({"error": {"message": "no such batch"}}))

    def _lost(self) -> web.StreamResponse | None:
        if self.lost_creates <= 0:
            return None
        self.lost_creates -= 1
        return web.json_response({"error": {"message": "lost"}}, status=500)

    async def _poll(self, batch: FakeBatch) -> web.StreamResponse | None:
        self.polls += 1
        if self.poll_errors > 0:
            self.poll_errors -= 1
            return web.json_response({"error": {"message": "busy"}}, status=503)
        await self._hold("poll")
        batch.gets += 1
        if not batch.ended and batch.gets >= self.polls_to_end:
            batch.status = {"complete": "completed", "expire": "expired",
                            "cancel": "cancelled"}[batch.plan]
        return None

    def _outcomes(self, batch: FakeBatch) -> list[tuple[str, str, dict[str, Any]]]:
        """(custom id, succeeded|errored|expired|cancelled, body), in reverse order."""
        half = len(batch.requests) // 2 if batch.plan != "complete" else len(batch.requests)
        out = []
        for i, (cid, body) in enumerate(batch.requests):
            if i >= half:
                out.append((cid, "expired" if batch.plan == "expire" else "cancelled", body))
            elif cid in batch.errors:
                out.append((cid, "errored", body))
            else:
                out.append((cid, "succeeded", body))
        return out[::-1]

    def _content(self, api: str, body: dict[str, Any], empty: bool) -> str:
        return '{"answer": ""}' if empty else self.responder(LLMCall(api, {}, body))

    # ------------------------------------------------------------ OpenAI

    async def _upload(self, request: web.Request) -> web.StreamResponse:
        if await self._hold("upload"):
            return web.json_response({"error": {"message": "held"}}, status=503)
        parts: dict[str, bytes] = {}
        async for part in await request.multipart():  # type: ignore[union-attr]
            parts[str(part.name)] = bytes(await part.read())  # type: ignore[union-attr]
        file_id = f"file-{len(self.files) + 1:04d}"
        self.files[file_id] = parts["file"]
        return web.json_response({"id": file_id, "object": "file", "purpose": "batch",
                                  "bytes": len(parts["file"])})

    async def _openai_create(self, request: web.Request) -> web.StreamResponse:
        if await self._hold("create_before"):
            return web.json_response({"error": {"message": "held"}}, status=503)
        body = await request.json()
        lines = [json.loads(x) for x in self.files[body["input_file_id"]].splitlines() if x]
        batch = self._create("openai", [(x["custom_id"], x["body"]) for x in lines],
                             body.get("metadata") or {})
        await self._hold("create_after")
        return self._lost() or web.json_response(self._openai_batch(batch))

    def _openai_batch(self, batch: FakeBatch) -> dict[str, Any]:
        out: dict[str, Any] = {"id": batch.id, "object": "batch", "status": batch.status,
                               "endpoint": "/v1/chat/completions", "completion_window": "24h",
                               "created_at": int(batch.created_at), "metadata": batch.metadata,
                               "output_file_id": None, "error_file_id": None}
        if batch.ended:
            ok, bad = [], []
            for cid, kind, body in self._outcomes(batch):
                line = self._openai_line(cid, kind, body, batch.empty)
                (ok if kind == "succeeded" else bad).append(line)
            for name, lines in (("output_file_id", ok), ("error_file_id", bad)):
                if lines:
                    file_id = f"file-{batch.id}-{name[:3]}"
                    self.files[file_id] = "".join(json.dumps(x) + "\n" for x in lines).encode()
                    out[name] = file_id
        return out

    def _openai_line(self, cid: str, kind: str, body: dict[str, Any],
                     empty: set[str]) -> dict[str, Any]:
        line: dict[str, Any] = {"id": f"batch_req_{cid}", "custom_id": cid, "error": None}
        if kind == "succeeded":
            envelope = _openai(body, self._content("openai", body, cid in empty), self.usage)
            line["response"] = {"status_code": 200, "request_id": "req", "body": envelope}
        elif kind == "errored":
            line["response"] = {"status_code": 500, "request_id": "req",
                                "body": {"error": {"message": "injected request error"}}}
        else:
            code = "batch_expired" if kind == "expired" else "batch_cancelled"
            line["response"] = None
            line["error"] = {"code": code, "message": f"request {kind}"}
        return line

    async def _openai_list(self, request: web.Request) -> web.StreamResponse:
        data = [self._openai_batch(b) for b in reversed(self.batches) if b.plan != "vanish"]
        return web.json_response({"object": "list", "data": data, "has_more": False})

    async def _openai_get(self, request: web.Request) -> web.StreamResponse:
        batch = self._get(request.match_info["id"])
        return await self._poll(batch) or web.json_response(self._openai_batch(batch))

    async def _file_content(self, request: web.Request) -> web.StreamResponse:
        return web.Response(body=self.files[request.match_info["id"]],
                            content_type="application/octet-stream")

    # ------------------------------------------------------------ Anthropic

    async def _anthropic_create(self, request: web.Request) -> web.StreamResponse:
        if "anthropic-version" not in request.headers:
            return web.json_response({"error": {"message": "no version"}}, status=400)
        if await self._hold("create_before"):
            return web.json_response({"error": {"message": "held"}}, status=503)
        body = await request.json()
        batch = self._create("anthropic", [(r["custom_id"], r["params"])
                                           for r in body["requests"]], {})
        await self._hold("create_after")
        return self._lost() or web.json_response(self._anthropic_batch(batch))

    def _anthropic_batch(self, batch: FakeBatch) -> dict[str, Any]:
        counts = Counter({"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0,
                          "expired": 0})
        if batch.ended:
            for _, kind, _ in self._outcomes(batch):
                counts["canceled" if kind == "cancelled" else kind] += 1
        else:
            counts["processing"] = len(batch.requests)
        created = datetime.fromtimestamp(batch.created_at, UTC).isoformat().replace("+00:00",
                                                                                     "Z")
        url = f"{self.anthropic_base_url}/v1/messages/batches/{batch.id}/results"
        return {"id": batch.id, "type": "message_batch",
                "processing_status": "ended" if batch.ended else "in_progress",
                "request_counts": dict(counts), "created_at": created,
                "results_url": url if batch.ended else None}

    async def _anthropic_list(self, request: web.Request) -> web.StreamResponse:
        data = [self._anthropic_batch(b) for b in reversed(self.batches)
                if b.plan != "vanish"]
        return web.json_response({"data": data, "has_more": False})

    async def _anthropic_get(self, request: web.Request) -> web.StreamResponse:
        batch = self._get(request.match_info["id"])
        return await self._poll(batch) or web.json_response(self._anthropic_batch(batch))

    async def _anthropic_results(self, request: web.Request) -> web.StreamResponse:
        batch = self._get(request.match_info["id"])
        lines = []
        for cid, kind, body in self._outcomes(batch):
            if kind == "succeeded":
                result: dict[str, Any] = {"type": "succeeded", "message": _anthropic(
                    body, self._content("anthropic", body, cid in batch.empty), self.usage)}
            elif kind == "errored":
                result = {"type": "errored", "error": {"type": "error", "error": {
                    "type": "api_error", "message": "injected request error"}}}
            else:
                result = {"type": "expired" if kind == "expired" else "canceled"}
            lines.append(json.dumps({"custom_id": cid, "result": result}) + "\n")
        return web.Response(text="".join(lines), content_type="application/binary")

    # ------------------------------------------------------------ lifecycle

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/files", self._upload)
        app.router.add_post("/v1/batches", self._openai_create)
        app.router.add_get("/v1/batches", self._openai_list)
        app.router.add_get("/v1/batches/{id}", self._openai_get)
        app.router.add_get("/v1/files/{id}/content", self._file_content)
        app.router.add_post("/v1/messages/batches", self._anthropic_create)
        app.router.add_get("/v1/messages/batches", self._anthropic_list)
        app.router.add_get("/v1/messages/batches/{id}", self._anthropic_get)
        app.router.add_get("/v1/messages/batches/{id}/results", self._anthropic_results)
