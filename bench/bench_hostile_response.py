"""Peak memory of one hostile response: bounded read against aiohttp's whole-body read.

A loopback service (tests/fakes/hostile_service.py) sends a gzip bomb (``--bomb-mib`` MiB of
zeros, compressed) and a never-ending chunked body. Measured with tracemalloc (aiohttp and
zlib output buffers are Python bytes, so they are traced):

- ``bounded``: ``HttpSystem.answer`` with the default ``max_response_bytes`` (4 MiB);
- ``whole``: the previous read, ``resp.read()`` with aiohttp's automatic decompression (the
  bomb only; the endless body is not bounded at all there and would run until the timeout).

Usage (from the repository root)::

    PYTHONPATH=src python bench/bench_hostile_response.py [--bomb-mib 256]
"""

from __future__ import annotations

import argparse
import asyncio
import time
import tracemalloc
from collections.abc import Awaitable, Callable

import aiohttp
from tests.fakes.hostile_service import HostileService, bomb

from snapaudit.errors import TransportInvalid
from snapaudit.systems.base import AnswerCall
from snapaudit.systems.config import HttpSystemConfig, RunConfig
from snapaudit.systems.http import HttpSystem


async def bounded(url: str) -> str:
    system = HttpSystem("s", HttpSystemConfig(url=url, doc_ids_path=None), RunConfig())
    try:
        await system.answer(AnswerCall("q", "q?", "s", 1, 1, 0))
    except TransportInvalid as exc:
        return str(exc)
    finally:
        await system.aclose()
    return "accepted"


async def whole(url: str) -> str:
    async with aiohttp.ClientSession() as session, session.post(url, json={}) as resp:
        return f"read {len(await resp.read())} bytes"


def measure(fn: Callable[[str], Awaitable[str]], url: str) -> tuple[str, int, float]:
    tracemalloc.start()
    start = time.perf_counter()
    outcome = asyncio.run(fn(url))
    wall = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return outcome, peak, wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--bomb-mib", type=int, default=256)
    args = parser.parse_args()
    size = args.bomb_mib << 20
    compressed = len(bomb(size))
    print(f"gzip bomb: {compressed:,} bytes on the wire, {size:,} bytes decoded")
    with HostileService(bomb_bytes=size) as svc:
        rows = [("gzip bomb", "whole", *measure(whole, svc.raw_url("gzip_bomb"))),
                ("gzip bomb", "bounded", *measure(bounded, svc.raw_url("gzip_bomb"))),
                ("endless chunked", "bounded", *measure(bounded, svc.raw_url("endless")))]
    base = rows[0][3]
    print("| body | read | outcome | peak traced MiB | x whole | wall s |")
    print("|---|---|---|---|---|---|")
    for body, read, outcome, peak, wall in rows:
        print(f"| {body} | {read} | {outcome[:60]} | {peak / 2**20:.1f} | {peak / base:.3f} "
              f"| {wall:.2f} |")


if __name__ == "__main__":
    main()
