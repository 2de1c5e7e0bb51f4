"""Replica fleets: spreading, resting a failing replica, correct runs while replicas die."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from collections import Counter
from pathlib import Path

from snapaudit.errors import TransportInvalid
from snapaudit.progress import SilentProgress
from snapaudit.run.execution.runner import CellResult, CellTask, RetryPolicy, run_cells
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.protocol import HttpSystemConfig, RunConfig
from snapaudit.systems.base import AnswerCall
from snapaudit.systems.http import HttpSystem
from snapaudit.systems.replicas import Replica, ReplicaPool
from snapaudit.systems.resources import RunResources
from snapaudit.testbed.generate.config import generator_config
from snapaudit.testbed.generate.registry import build_generator
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.rag_service import FakeRagService
from tests.testbed.generate.helpers import REQUEST


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_pool_spreads_rests_and_retries_later() -> None:
    clock = Clock()
    pool = ReplicaPool(["a", "b", "c"], fail_threshold=2, rest_s=10.0, clock=clock)
    held = [pool.acquire() for _ in range(3)]
    assert sorted(r.url for r in held) == ["a", "b", "c"]  # fewest in flight first
    for r in held:
        pool.release(r, ok=True)
    b = pool.replicas[1]
    pool.release(_take(pool, b), ok=False)
    assert [r.url for r in pool.healthy()] == ["a", "b", "c"]  # one failure: still healthy
    pool.release(_take(pool, b), ok=False)
    assert [r.url for r in pool.healthy()] == ["a", "c"]       # second in a row: rested 10 s
    assert {pool.acquire().url for _ in range(6)} == {"a", "c"}
    clock.now += 10.0
    assert "b" in [r.url for r in pool.healthy()]              # tried again after its rest
    pool.release(_take(pool, b), ok=False)
    pool.release(_take(pool, b), ok=False)
    assert b.resting_until == clock.now + 20.0                 # the next rest doubles


def test_all_resting_uses_the_one_back_first() -> None:
    clock = Clock()
    pool = ReplicaPool(["a", "b"], fail_threshold=1, rest_s=5.0, clock=clock)
    a = pool.acquire()
    pool.release(a, ok=False)
    clock.now += 1.0
    b = pool.acquire()
    pool.release(b, ok=False)
    assert pool.healthy() == [] and pool.acquire() is a


def _take(pool: ReplicaPool, replica: Replica) -> Replica:
    replica.in_flight += 1  # as acquire() does, for a chosen replica
    return replica


def test_http_system_survives_all_but_one_replica_dying(tmp_path: Path) -> None:
    services = [FakeRagService(states=("s",)).start() for _ in range(3)]
    urls = [svc.url("s") for svc in services]
    resources = RunResources({urls[0]: urls[1:]}, fail_threshold=2, rest_s=60.0)
    try:
        template = {"question": "{question}", "question_id": "{question_id}",
                    "repeat": "{repeat}"}
        system = HttpSystem("s", HttpSystemConfig(url=urls[0], body_template=template),
                            RunConfig(concurrency=4, timeout_s=2.0), resources.pool_for(urls[0]))

        def task(i: int) -> CellTask:
            async def call(attempt: int, seed: int) -> CellResult:
                out = await system.answer(AnswerCall(f"q{i:03d}", f"what is {i}?", "s", 1,
                                                     attempt, seed))
                return CellResult({"answer": out.answer}, meta=out.meta)
            return CellTask(f"q{i:03d}", {"i": i}, call)

        async def run(ledger: Ledger) -> None:
            first = await run_cells(ledger, "answer", [task(i) for i in range(30)],
                                    RetryPolicy(concurrency=4, backoff_base_s=0.0,
                                                max_attempts=8), SilentProgress())
            assert first.accepted_now == 30
            services[0].stop()  # two of three replicas die mid-run
            services[1].stop()
            second = await run_cells(ledger, "answer", [task(i) for i in range(30, 90)],
                                     RetryPolicy(concurrency=4, backoff_base_s=0.0,
                                                 max_attempts=8), SilentProgress())
            assert second.accepted_now == 60
            await system.aclose()

        with Ledger(tmp_path / "l.sqlite") as ledger:
            asyncio.run(run(ledger))
        with sqlite3.connect(tmp_path / "l.sqlite") as db:
            rows = [(o, json.loads(m) if m else {}, e) for o, m, e in db.execute(
                "SELECT outcome, meta, error FROM attempts ORDER BY id")]
        served = Counter(m["replica"] for o, m, _ in rows if o == "accepted")
        early = {m["replica"] for _, m, _ in rows[:30] if m}
        failed = [e for o, _, e in rows if o == "transport_invalid"]
        assert early == set(urls)                     # the calls were spread over all three
        assert sum(served.values()) == 90
        assert served[urls[2]] >= 60                  # the survivor served the rest
        # each dead replica failed twice in a row, then rested; calls already on their way to
        # it when it failed the second time (at most concurrency - 1 = 3) failed as well
        per_replica = Counter(e.split(": ")[0] for e in failed if e)
        assert failed and max(per_replica.values()) <= 2 + 3
        assert set(per_replica) <= {f"replica {url}" for url in urls[:2]}  # only the dead ones
        assert all(e and "replica" in e for e in failed)
        assert resources.pool_for(urls[0]).replicas[2].served >= 60
    finally:
        services[2].stop()


def test_openai_generator_spreads_over_replicas_and_survives_deaths() -> None:
    servers = [FakeLLMServer().start() for _ in range(3)]
    bases = [srv.openai_base_url for srv in servers]
    resources = RunResources({bases[0]: bases[1:]}, fail_threshold=1, rest_s=60.0)
    try:
        config = generator_config(backend="openai", model="fake-model", base_url=bases[0])

        async def run() -> list[str]:
            generator = build_generator(config, resources)
            served: list[str] = []
            try:
                for _ in range(6):
                    served.append((await generator.generate(REQUEST)).meta["replica"])
                servers[0].stop()
                servers[1].stop()
                for _ in range(6):
                    for _attempt in range(3):  # the engine's retries, in small
                        try:
                            served.append((await generator.generate(REQUEST)).meta["replica"])
                            break
                        except TransportInvalid as exc:
                            assert "replica" in exc.detail
            finally:
                await generator.aclose()
            return served

        served = asyncio.run(run())
        assert set(served[:6]) == set(bases)
        assert served[6:] == [bases[2]] * 6
        assert config.model_dump() == generator_config(
            backend="openai", model="fake-model", base_url=bases[0]).model_dump()
    finally:
        servers[2].stop()
