"""A loopback RAG service that fights back: bombs, endless bodies, deep JSON, echoed keys.

Extends :class:`FakeRagService` with hostile fault kinds (``HOSTILE``), served on the first
``faults_per_key`` hits of a key like the ordinary faults, and ``/raw/{kind}`` which serves
one kind to any request (for the generator backends, whose bodies are not the service's).
Every echo sends back the ``Authorization`` header the client sent: a key configured as
:data:`SECRET` must never appear in anything the suite writes (tests/conftest.py checks).
"""

from __future__ import annotations

import asyncio
import functools
import json
import zlib
from dataclasses import dataclass

from aiohttp import web

from tests.fakes.rag_service import FakeRagService

# Distinctive and not shaped like a key, so only the configured-secret mask can catch it.
SECRET = "zebra-quartz-SNAPAUDIT-TEST-SECRET-41"
SECRET_ENV = "SNAPAUDIT_HOSTILE_KEY"
HOSTILE = ("gzip_bomb", "deflate_bomb", "endless", "deep_json", "long_int", "echo_401",
           "echo_text", "echo_500", "escapes")
DEPTH = 100_000


@functools.lru_cache(maxsize=4)
def bomb(size: int, wbits: int = 31) -> bytes:
    """``size`` zero bytes compressed (gzip for wbits 31, zlib deflate for 15)."""
    comp = zlib.compressobj(9, zlib.DEFLATED, wbits)
    block = b"\0" * (1 << 20)
    parts = [comp.compress(block) for _ in range(size >> 20)]
    return b"".join([*parts, comp.flush()])


@dataclass
class HostileService(FakeRagService):
    bomb_bytes: int = 64 << 20
    endless_chunk: int = 64 << 10
    endless_written: int = 0

    def routes(self, app: web.Application) -> None:
        super().routes(app)
        app.router.add_route("*", "/raw/{kind}", self._raw)

    def raw_url(self, kind: str) -> str:
        return f"http://127.0.0.1:{self.port}/raw/{kind}"

    async def _raw(self, request: web.Request) -> web.StreamResponse:
        return await self._fault(request, request.match_info["kind"])

    async def _fault(self, request: web.Request, fault: str) -> web.StreamResponse:
        echo = request.headers.get("Authorization", "")
        echo = f"{echo} (caller {echo.split()[-1] if echo else ''})"  # the bare key too
        json_type = "application/json"
        if fault in ("gzip_bomb", "deflate_bomb"):
            gz = fault == "gzip_bomb"
            return web.Response(body=bomb(self.bomb_bytes, 31 if gz else 15),
                                content_type=json_type,
                                headers={"Content-Encoding": "gzip" if gz else "deflate"})
        if fault == "endless":
            return await self._endless(request)
        if fault == "deep_json":
            return web.Response(text="[" * DEPTH + "]" * DEPTH, content_type=json_type)
        if fault == "long_int":
            return web.Response(text='{"answer": "x", "n": ' + "9" * 5000 + "}",
                                content_type=json_type)
        if fault == "echo_401":
            return web.Response(status=401, text=json.dumps(
                {"error": f"invalid key: {echo}", "hint": "\x1b[2J\x1b]0;owned\x07"}),
                content_type=json_type)
        if fault == "echo_500":
            return web.Response(status=500, text=f"upstream rejected {echo}")
        if fault == "echo_text":
            return web.Response(text=f"<html>bad gateway for {echo}</html>")
        if fault == "escapes":
            return web.Response(text="\x1b[31mRED\x1b[0m\x1b]8;;http://x\x07link\u202e")
        return await super()._fault(request, fault)

    async def _endless(self, request: web.Request) -> web.StreamResponse:
        resp = web.StreamResponse(headers={"Content-Type": "application/json"})
        resp.enable_chunked_encoding()
        await resp.prepare(request)
        chunk = b"[" + b" " * (self.endless_chunk - 1)
        try:
            while self.endless_written < 1 << 30:  # a bound for the fake, not for the client
                await resp.write(chunk)
                self.endless_written += len(chunk)
                await asyncio.sleep(0)
        except (ConnectionResetError, ConnectionError):
            pass
        return resp
