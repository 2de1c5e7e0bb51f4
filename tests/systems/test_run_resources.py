"""Replica pools and shared generators belong to the run that built them and end with it."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

import pytest

import snapaudit
from snapaudit.systems.replicas import ReplicaPool
from snapaudit.systems.resources import RunResources
from snapaudit.testbed.generate.config import generator_config
from snapaudit.testbed.generate.registry import shared_generator
from snapaudit.testbed.system import TestbedSystem
from tests.fakes.rag_service import FakeRagService
from tests.helpers.protocol import write_protocol, write_world


def _pools_alive() -> list[ReplicaPool]:
    gc.collect()
    # type(), not isinstance(): isinstance reads __class__, and some objects that other tests
    # leave in the heap (torch's deprecated module attributes) warn when it is read
    return [o for o in gc.get_objects() if type(o) is ReplicaPool]


def test_a_run_leaves_no_pool_alive_and_two_runs_share_nothing(tmp_path: Path) -> None:
    write_world(tmp_path)
    assert _pools_alive() == []
    with FakeRagService() as svc:
        proto = write_protocol(tmp_path, svc)
        for name in ("run1", "run2"):
            snapaudit.audit(proto, tmp_path / name)
            assert _pools_alive() == []  # nothing kept in module globals between the runs


def test_runs_given_the_same_resources_share_their_pools(tmp_path: Path) -> None:
    write_world(tmp_path)
    owner = RunResources()
    with FakeRagService() as svc:
        proto = write_protocol(tmp_path, svc)
        snapaudit.audit(proto, tmp_path / "run1", resources=owner)
        pool = owner.pool_for(svc.url("old"))
        first = pool.replicas[0].served
        assert first == 8 * 2  # 8 questions x 2 repeats of the old state
        snapaudit.audit(proto, tmp_path / "run2", resources=owner)
        assert owner.pool_for(svc.url("old")) is pool and pool.replicas[0].served == 2 * first
    del pool
    asyncio.run(owner.aclose())
    assert len(owner) == 0 and _pools_alive() == []


class _Model:
    closed = False

    async def aclose(self) -> None:
        self.closed = True


def test_shared_instances_are_built_once_and_closed_with_the_resources() -> None:
    resources = RunResources()
    built: list[_Model] = []

    def build() -> _Model:
        built.append(_Model())
        return built[-1]

    assert resources.shared("m", build) is resources.shared("m", build)
    assert len(built) == 1 and len(resources) == 1
    asyncio.run(resources.aclose())
    assert built[0].closed and len(resources) == 0
    with pytest.raises(RuntimeError, match="closed"):
        resources.shared("m", build)


def test_states_of_one_run_share_a_generator_and_other_runs_do_not() -> None:
    config = generator_config(backend="openai", model="m", base_url="http://127.0.0.1:9/v1")

    async def go() -> None:
        mine, other = RunResources(), RunResources()
        try:
            old = TestbedSystem("old", config, lambda n: None, mine)  # type: ignore[arg-type,return-value]
            new = TestbedSystem("new", config, lambda n: None, mine)  # type: ignore[arg-type,return-value]
            assert old.generator is new.generator is shared_generator(config, mine)
            assert shared_generator(config, other) is not old.generator
            await old.aclose()  # a state's close leaves the run's generator to the run
            assert len(mine) == 2  # the generator and the pool of its base URL
        finally:
            await mine.aclose()
            await other.aclose()
        assert len(mine) == 0 and len(other) == 0

    asyncio.run(go())
