"""A loopback server that answers every request after a fixed delay (for bench_engine.py).

``POST /{state}/answer`` (a RAG service: ``{"answer", "doc_ids"}``) and
``POST /v1/chat/completions`` (OpenAI-compatible) both reply after ``--delay`` seconds.
Prints ``PORT <n>`` on one line once listening on 127.0.0.1, then serves until stdin closes
or it is terminated. Run it as its own process so it does not share the client's event loop::

    python bench/delay_server.py --delay 0.2
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
import time

from aiohttp import web

DOC_IDS = [f"doc-{i:07d}" for i in range(8)]


def make_app(delay: float) -> web.Application:
    async def answer(request: web.Request) -> web.Response:
        body = await request.json()
        await asyncio.sleep(delay)
        return web.json_response({"answer": f"answer {body.get('question_id', '')}",
                                  "doc_ids": DOC_IDS})

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        await asyncio.sleep(delay)
        return web.json_response({
            "id": "chatcmpl-bench", "object": "chat.completion", "created": int(time.time()),
            "model": body.get("model", "bench"),
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": '{"answer": "Paris"}'}}],
            "usage": {"prompt_tokens": 50, "completion_tokens": 5, "total_tokens": 55}})

    app = web.Application()
    app.router.add_post("/{state}/answer", answer)
    app.router.add_post("/v1/chat/completions", chat)
    return app


async def serve(delay: float) -> None:
    runner = web.AppRunner(make_app(delay), access_log=None)
    await runner.setup()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    site = web.SockSite(runner, sock, backlog=4096)
    await site.start()
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    loop = asyncio.get_running_loop()
    await loop.run_in_executor(None, sys.stdin.read)  # until the parent closes stdin
    await runner.cleanup()


def main() -> None:
    ap = argparse.ArgumentParser(description="fixed-delay loopback server")
    ap.add_argument("--delay", type=float, default=0.2)
    asyncio.run(serve(ap.parse_args().delay))


if __name__ == "__main__":
    main()
