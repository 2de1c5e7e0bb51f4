"""Engine overhead of the answer stage, against a bare aiohttp loop in the same run.

A loopback server (``bench/delay_server.py``, its own process) answers every call after a
fixed delay. Both clients make the same 4,800 calls (1,200 questions x 2 states x 2 repeats)
at concurrency c = 16, 64 and 256:

- ``engine``: the answer stage as ``snapaudit run`` drives it for an HTTP system:
  ``runner.run_cells`` over a fresh ``Ledger`` (WAL, synchronous=FULL, durable attempt row
  before every call, group commit), ``systems.http.HttpSystem`` per state, and the engine's
  answer validation;
- ``bare``: ``asyncio`` + one ``aiohttp.ClientSession`` per state (connector limit c) and a
  semaphore of c, posting the same bodies and parsing the JSON; no ledger.

Reported: throughput / ideal (ideal = c / delay), engine / bare, and client CPU per call.
Best of ``--repeat`` runs, the two clients taking turns. Usage::

    python bench/bench_engine.py [--delay 0.2] [--cells 4800] [--concurrency 16,64,256]
                                 [--repeat 2] [--gc-pacing on|off]

``--gc-pacing``: the stage paces the garbage collector as ``snapaudit run`` does (``on``, the
default) or leaves it alone as a library caller gets it (``off``).
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Coroutine
from functools import partial
from pathlib import Path
from typing import Any

import aiohttp

from snapaudit.progress import SilentProgress
from snapaudit.run.answers import validate_answer
from snapaudit.run.execution.gcpacing import gc_pacing
from snapaudit.run.execution.runner import CellResult, CellTask, RetryPolicy, run_cells
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.protocol import HttpSystemConfig, RunConfig
from snapaudit.systems.base import AnswerCall
from snapaudit.systems.http import HttpSystem

STATES = ("old", "new")
TEMPLATE = {"question": "{question}", "question_id": "{question_id}", "state": "{state}",
            "repeat": "{repeat}"}


def cells(n_cells: int) -> list[tuple[str, str, int]]:
    per_q = len(STATES) * 2
    return [(f"q{i:05d}", s, r) for i in range(n_cells // per_q) for s in STATES for r in (1, 2)]


def question(qid: str) -> str:
    return f"Which city hosted the event numbered {qid}?"


async def engine_stage(port: int, todo: list[tuple[str, str, int]], c: int, db: Path,
                       pace: bool = True) -> int:
    run = RunConfig(concurrency=c, timeout_s=60.0)
    systems = {s: HttpSystem(s, HttpSystemConfig(url=f"http://127.0.0.1:{port}/{s}/answer",
                                                 body_template=TEMPLATE), run) for s in STATES}

    def make(qid: str, state: str, rep: int) -> Callable[[int, int], Awaitable[CellResult]]:
        async def call(attempt: int, seed: int) -> CellResult:
            out = await systems[state].answer(AnswerCall(qid, question(qid), state, rep,
                                                         attempt, seed))
            validate_answer(out.answer)
            docs = list(out.doc_ids) if out.doc_ids is not None else None
            return CellResult({"answer": out.answer, "doc_ids": docs}, dict(out.usage),
                              out.latency_s or None)
        return call

    tasks = [CellTask(f"{q}|{s}|{r}", {"question_id": q, "state": s, "repeat": r}, make(q, s, r),
                      endpoint=s)
             for q, s, r in todo]
    try:
        with Ledger(db) as ledger, gc_pacing(pace):
            await run_cells(ledger, "answer", tasks, RetryPolicy(concurrency=c),
                            SilentProgress())
            return len(ledger.accepted_keys("answer"))
    finally:
        for system in systems.values():
            await system.aclose()


async def bare_loop(port: int, todo: list[tuple[str, str, int]], c: int) -> int:
    timeout = aiohttp.ClientTimeout(total=60.0)
    sessions = {s: aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=c, limit_per_host=0),
                                         timeout=timeout) for s in STATES}
    sem = asyncio.Semaphore(c)
    done = 0

    async def one(qid: str, state: str, rep: int) -> None:
        nonlocal done
        body = {"question": question(qid), "question_id": qid, "state": state,
                "repeat": str(rep)}
        async with sem, sessions[state].post(f"http://127.0.0.1:{port}/{state}/answer",
                                             json=body) as resp:
            reply: dict[str, Any] = await resp.json()
        if reply.get("answer"):
            done += 1

    try:
        await asyncio.gather(*(one(q, s, r) for q, s, r in todo))
    finally:
        for session in sessions.values():
            await session.close()
    return done


def timed(fn: Callable[[], Coroutine[Any, Any, int]]) -> tuple[float, float, int]:
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    t0 = time.perf_counter()
    ok = asyncio.run(fn())
    wall = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    return wall, cpu, ok


def start_server(delay: float) -> tuple[subprocess.Popen[str], int]:
    server = Path(__file__).with_name("delay_server.py")
    proc = subprocess.Popen([sys.executable, str(server), "--delay", str(delay)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline().split()
    if len(line) != 2 or line[0] != "PORT":
        proc.kill()
        raise SystemExit(f"delay server did not start: {line}")
    return proc, int(line[1])


def main() -> None:
    ap = argparse.ArgumentParser(description="answer-stage throughput vs a bare aiohttp loop")
    ap.add_argument("--delay", type=float, default=0.2)
    ap.add_argument("--cells", type=int, default=4800)
    ap.add_argument("--concurrency", default="16,64,256")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--gc-pacing", choices=("on", "off"), default="on")
    args = ap.parse_args()
    todo = cells(args.cells)
    proc, port = start_server(args.delay)
    print(f"{len(todo):,} cells, server delay {args.delay * 1000:.0f} ms (own process), best of "
          f"{args.repeat}, gc pacing {args.gc_pacing}\n")
    print("| c | ideal calls/s | bare calls/s | bare / ideal | engine calls/s | engine / ideal "
          "| engine / bare | client CPU ms/call bare / engine | resume of the finished run s "
          "| ledger bytes/cell |\n|---|---|---|---|---|---|---|---|---|---|")
    try:
        for c in (int(x) for x in args.concurrency.split(",")):
            best: dict[str, tuple[float, float]] = {}
            extra: dict[str, float] = {}
            for _ in range(args.repeat):
                with tempfile.TemporaryDirectory() as tmp:
                    runs: dict[str, Callable[[], Coroutine[Any, Any, int]]] = {
                        "bare": partial(bare_loop, port, todo, c),
                        "engine": partial(engine_stage, port, todo, c,
                                          Path(tmp) / "ledger.sqlite",
                                          args.gc_pacing == "on")}
                    for name, fn in runs.items():
                        wall, cpu, ok = timed(fn)
                        if ok != len(todo):
                            raise SystemExit(f"{name}: {ok} of {len(todo)} calls answered")
                        if name not in best or wall < best[name][0]:
                            best[name] = (wall, cpu)
                    size = sum(p.stat().st_size for p in Path(tmp).iterdir())
                    resume, _, ok = timed(runs["engine"])  # every cell already accepted
                    if ok != len(todo):
                        raise SystemExit(f"resume: {ok} of {len(todo)} cells")
                    extra["resume"] = min(resume, extra.get("resume", resume))
                    extra["bytes"] = size / len(todo)
            ideal = c / args.delay
            bare, eng = len(todo) / best["bare"][0], len(todo) / best["engine"][0]
            print(f"| {c} | {ideal:,.0f} | {bare:,.0f} | {bare / ideal:.2f} | {eng:,.0f} | "
                  f"{eng / ideal:.2f} | {eng / bare:.2f} | "
                  f"{1000 * best['bare'][1] / len(todo):.2f} / "
                  f"{1000 * best['engine'][1] / len(todo):.2f} | {extra['resume']:.1f} | "
                  f"{extra['bytes']:,.0f} |")
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


if __name__ == "__main__":
    main()
