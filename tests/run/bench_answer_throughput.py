"""Answer-stage throughput against the fake service, vs ideal and vs a bare aiohttp client.

    .venv/bin/python -m tests.run.bench_answer_throughput [--questions 500] [--latency 0.2]

Ideal = concurrency / latency. Both rates are measured in the same run, against the same
loopback fake service answering after ``latency`` seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

import aiohttp

from snapaudit.run.engine import run_protocol_file
from tests.fakes.rag_service import FakeRagService
from tests.helpers.protocol import write_protocol, write_world


class StageClock:
    """A Progress that records when the answer stage starts and finishes."""

    def __init__(self) -> None:
        self.current = ""
        self.start = 0.0
        self.end = 0.0
        self.total = 0
        self.done = 0

    def stage(self, name: str, total: int | None = None) -> None:
        self.current = name
        if name == "answer":
            self.start, self.total, self.done = time.monotonic(), total or 0, 0

    def advance(self, n: int = 1) -> None:
        if self.current == "answer":
            self.done += n
            self.end = time.monotonic()

    def info(self, message: str) -> None:
        return None

    def close(self) -> None:
        return None


async def bare_client(svc: FakeRagService, n: int, concurrency: int) -> float:
    sem = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one(i: int) -> None:
            async with sem, session.post(svc.url("old"), json={
                    "question_id": f"b{i}", "repeat": 1, "question": "?"}) as resp:
                await resp.json()
        start = time.monotonic()
        await asyncio.gather(*(one(i) for i in range(n)))
        return n / (time.monotonic() - start)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=500)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    args = parser.parse_args()
    cells = args.questions * 4
    ideal = args.concurrency / args.latency
    with tempfile.TemporaryDirectory() as tmp, FakeRagService(latency_s=args.latency) as svc:
        root = Path(tmp)
        write_world(root, n=args.questions)
        proto = write_protocol(root, svc, size=args.questions,
                               run={"concurrency": args.concurrency, "timeout_s": 30})
        bare = asyncio.run(bare_client(svc, cells, args.concurrency))
        clock = StageClock()
        run_protocol_file(proto, root / "run", [], clock)
        engine = clock.done / (clock.end - clock.start)
    print(f"cells {cells}, latency {args.latency}s, concurrency {args.concurrency}, "
          f"ideal {ideal:.0f}/s")
    print(f"bare aiohttp client: {bare:.0f}/s = {bare / ideal:.2f} of ideal")
    print(f"engine answer stage: {engine:.0f}/s = {engine / ideal:.2f} of ideal, "
          f"{engine / bare:.2f} of the bare client")


if __name__ == "__main__":
    main()
