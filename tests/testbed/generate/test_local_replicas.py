"""The embedded model's replica queue and whole-prompt state LRU, without a model.

The replicas are fake models (no llama.cpp): what is tested is which replica takes which
call, that every call is answered once, and how the LRU evicts within its byte budget."""

from __future__ import annotations

import asyncio
import ctypes
import threading
from collections.abc import Hashable
from typing import Any

import pytest

from snapaudit.errors import BackendError
from snapaudit.testbed.generate.local_replicas import LocalReplicas
from snapaudit.testbed.generate.prompt_states import PromptStates, SavedState


def state(n_bytes: int) -> SavedState:
    return SavedState((1, 2), (ctypes.c_uint8 * n_bytes)(), n_bytes, None, 0)


def test_prompt_states_evict_least_recently_used_within_the_budget() -> None:
    states = PromptStates(budget=250)
    states.put("a", state(100))
    states.put("b", state(100))
    assert states.get("a") is not None  # a is now the most recently used
    states.put("c", state(100))  # 300 > 250: b goes
    assert "b" not in states and "a" in states and "c" in states
    assert states.bytes == 200 and len(states) == 2
    states.put("d", state(251))  # larger than the whole budget: not kept, nothing evicted
    assert "d" not in states and len(states) == 2
    states.put("a", state(150))  # replacing a counts its new size once
    assert states.bytes == 250 and list(states._states) == ["c", "a"]
    assert PromptStates(budget=0).fits(1) is False


class FakePrompts:
    def __init__(self, budget: int) -> None:
        self.budget = budget


class FakeModel:
    """Records the calls it ran; holds the keys it ran (when it keeps states). Its first
    call waits at ``start`` (when given): every replica then holds a call before any ends."""

    def __init__(self, index: int, keep: bool, gate: threading.Event,
                 start: threading.Barrier | None = None) -> None:
        self.index = index
        self.prompts = FakePrompts(1 if keep else 0)
        self.kept: set[Hashable] = set()
        self.ran: list[Hashable] = []
        self.closed = False
        self.gate = gate
        self.start = start

    def holds(self, key: Hashable) -> bool:
        return key in self.kept

    def answer(self, key: Hashable) -> tuple[Hashable, int]:
        if self.start is not None and not self.ran:
            self.start.wait(10)  # a broken barrier (a replica got no call) fails the test
        self.gate.wait(10)
        self.ran.append(key)
        if self.prompts.budget:
            self.kept.add(key)
        return key, self.index

    def close(self) -> None:
        self.closed = True


async def run_calls(models: list[Any], keys: list[str]) -> list[tuple[Hashable, int]]:
    pool = LocalReplicas(models)
    loop = asyncio.get_running_loop()
    futures = [pool.submit(loop, key, lambda m, k=key: m.answer(k)) for key in keys]
    for model in models:
        model.gate.set()
    try:
        return list(await asyncio.gather(*futures))
    finally:
        await pool.aclose()


def test_a_repeat_goes_to_the_replica_holding_its_prompt() -> None:
    start = threading.Barrier(2)
    models = [FakeModel(i, keep=True, gate=threading.Event(), start=start) for i in range(2)]
    keys = ["a", "b", "c", "a", "b", "c", "d", "a"]
    out = asyncio.run(run_calls(models, keys))
    assert [k for k, _ in out] == keys  # every call answered once, in its own future
    replica_of: dict[Hashable, int] = {}
    for key, replica in out:
        assert replica_of.setdefault(key, replica) == replica, key  # all on one replica
    assert replica_of["a"] != replica_of["b"]  # the first two calls ran at once
    assert sum(len(m.ran) for m in models) == 8
    assert all(m.closed for m in models)


def test_without_saved_states_any_free_replica_takes_a_repeat() -> None:
    start = threading.Barrier(2)  # each replica's first call waits for the other's
    models = [FakeModel(i, keep=False, gate=threading.Event(), start=start) for i in range(2)]
    out = asyncio.run(run_calls(models, ["a", "a"]))
    assert {replica for _, replica in out} == {0, 1}


def test_a_closed_pool_refuses_calls_and_cancels_the_queued_ones() -> None:
    gate = threading.Event()
    models = [FakeModel(0, keep=True, gate=gate)]

    async def go() -> None:
        pool = LocalReplicas(models)  # type: ignore[arg-type]
        loop = asyncio.get_running_loop()
        running = pool.submit(loop, "a", lambda m: m.answer("a"))
        await asyncio.sleep(0.1)
        queued = pool.submit(loop, "b", lambda m: m.answer("b"))
        await pool.aclose()  # a call is running: not waited for
        await asyncio.sleep(0)
        assert queued.cancelled()
        with pytest.raises(BackendError, match="closed"):
            pool.submit(loop, "c", lambda m: m.answer("c"))
        gate.set()
        assert await running == ("a", 0)

    asyncio.run(go())
    assert models[0].ran == ["a"]
