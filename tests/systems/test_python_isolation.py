"""A Python system's execution settings, one system at a time: how many calls run at once,
the loop-lag watchdog, latency measured per call, ``setup`` and its failures, and the
settings left out of the protocol hash."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest

from snapaudit.errors import ConfigError, TransportInvalid
from snapaudit.run.record.protocol import parse_protocol, protocol_hash
from snapaudit.systems.base import AnswerCall, AnswerOutcome
from snapaudit.systems.config import PythonSystemConfig, RunConfig
from snapaudit.systems.python import PythonSystem
from snapaudit.systems.workers import exit_words

FAKES = "tests.fakes.python_isolation"


def _system(target: str, timeout_s: float = 5.0, concurrency: int = 4,
            **settings: Any) -> PythonSystem:
    kwargs = settings.pop("kwargs", {})
    cfg = PythonSystemConfig(target=f"{FAKES}:{target}", kwargs=kwargs, **settings)
    return PythonSystem("old", cfg, RunConfig(timeout_s=timeout_s, concurrency=concurrency))


def _call(qid: str, attempt: int = 1, repeat: int = 1) -> AnswerCall:
    return AnswerCall(qid, f"question {qid}", "old", repeat, attempt, seed=7)


async def _answers(system: PythonSystem, *calls: AnswerCall) -> list[AnswerOutcome | BaseException]:
    try:
        return list(await asyncio.gather(*(system.answer(c) for c in calls),
                                         return_exceptions=True))
    finally:
        await system.aclose()


def test_slots_default_to_one_for_a_sync_target_unless_thread_safe() -> None:
    cfg = PythonSystemConfig(target="m:f")
    assert cfg.slots(4, is_async=False) == 1
    assert cfg.slots(4, is_async=True) == 4
    assert PythonSystemConfig(target="m:f", thread_safe=True).slots(4, is_async=False) == 4
    assert PythonSystemConfig(target="m:f", max_concurrency=2).slots(8, is_async=True) == 2
    with pytest.raises(ValueError):
        PythonSystemConfig(target="m:f", max_concurrency=0)
    with pytest.raises(ValueError, match=r"kwargs\.resources"):
        PythonSystemConfig(target="m:f", setup="m:load", kwargs={"resources": 1})
    assert exit_words(-6) == "worker died: SIGABRT (signal 6)"
    assert exit_words(-11) == "worker died: SIGSEGV (signal 11)"
    assert exit_words(3) == "worker exited with code 3"


def _protocol(system: dict[str, Any]) -> dict[str, Any]:
    return {"name": "p", "states": {"order": ["old", "new"], "old": "old", "new": "new"},
            "cohort": {"source": "jsonl", "path": "q.jsonl", "size": 6},
            "gold": {"path": "g.jsonl"}, "system": {"kind": "python"},
            "systems": {"old": dict(system), "new": dict(system)}}


def test_execution_settings_are_not_bound_and_setup_is() -> None:
    plain = protocol_hash(parse_protocol(_protocol({"target": "m:f"})))
    # the hash of a protocol without the new keys is the one it had before they existed
    assert plain == protocol_hash(parse_protocol(_protocol(
        {"target": "m:f", "thread_safe": False, "isolation": "thread"})))
    changed = _protocol({"target": "m:f", "max_concurrency": 3, "thread_safe": True,
                         "isolation": "process"})
    assert protocol_hash(parse_protocol(changed)) == plain  # operational, like [run]
    with_setup = _protocol({"target": "m:f", "setup": "m:load"})
    assert protocol_hash(parse_protocol(with_setup)) != plain  # shapes answers: bound
    dumped = parse_protocol(changed).model_dump(mode="json")["systems"]["old"]
    assert (dumped["isolation"], dumped["max_concurrency"]) == ("process", 3)


def test_a_blocking_async_call_past_its_timeout_is_not_accepted() -> None:
    system = _system("blocking_async", timeout_s=0.5, kwargs={"block_s": 1.2})

    async def both() -> list[AnswerOutcome | BaseException]:
        return [*await _answers(system, _call("q000")), *await _answers(system, _call("q001"))]

    blocked, fine = asyncio.run(both())
    assert isinstance(blocked, TransportInvalid) and blocked.reason == "timeout"
    assert "event loop was blocked for 1." in blocked.detail
    assert 'isolation = "process"' in blocked.detail and "async client" in blocked.detail
    assert isinstance(fine, AnswerOutcome) and fine.answer == "answer q001"


@pytest.mark.slow
def test_a_blocking_async_call_within_its_timeout_is_accepted_with_a_warning() -> None:
    system = _system("blocking_async", timeout_s=4.0, kwargs={"block_s": 1.3})
    out, = asyncio.run(_answers(system, _call("q000")))
    assert isinstance(out, AnswerOutcome) and out.answer == "answer q000"
    assert "event loop was blocked for 1." in out.meta["snapaudit_warning"]
    quick, = asyncio.run(_answers(_system("blocking_async"), _call("q001")))
    assert isinstance(quick, AnswerOutcome) and "snapaudit_warning" not in quick.meta


def test_latency_is_measured_per_call_of_a_loop_blocking_target() -> None:
    # two concurrent cells of an async target that blocks 0.4 s: each call took 0.4 s, not
    # the 0.8 s the loop took for both (nor one latency shared by both)
    system = _system("blocking_each", kwargs={"block_s": 0.4})
    outs = asyncio.run(_answers(system, _call("q000"), _call("q001")))
    latencies = sorted(o.latency_s for o in outs if isinstance(o, AnswerOutcome))
    assert len(latencies) == 2
    assert all(0.39 <= lat < 0.7 for lat in latencies), latencies


def test_a_retry_is_not_called_while_its_abandoned_attempt_still_runs() -> None:
    # two slots; q000's first attempt hangs 1.5 s under timeout_s = 0.4
    system = _system("hang_first", timeout_s=0.4, max_concurrency=2, kwargs={"hang_s": 1.5})

    async def calls() -> list[AnswerOutcome | BaseException]:
        first = asyncio.ensure_future(system.answer(_call("q000")))
        await asyncio.sleep(0.05)
        out: list[AnswerOutcome | BaseException] = []
        for c in (_call("q000", attempt=2), _call("q001")):
            try:
                out.append(await system.answer(c))
            except TransportInvalid as exc:
                out.append(exc)
        return [*(await asyncio.gather(first, return_exceptions=True)), *out]

    try:
        first, retry, other = asyncio.run(calls())
    finally:
        asyncio.run(system.aclose())
    assert isinstance(first, TransportInvalid) and "abandoned" in first.detail
    # the retry waited one more timeout for the running attempt, then failed uncalled
    assert isinstance(retry, TransportInvalid) and retry.detail.startswith("not called")
    assert "1 abandoned call(s) of state old still running, 2 slot(s)" in retry.detail
    assert isinstance(other, AnswerOutcome)  # the second slot still serves other cells


@pytest.mark.slow
def test_latency_of_async_calls_in_worker_processes_is_per_call() -> None:
    system = _system("blocking_each", isolation="process", max_concurrency=2,
                     kwargs={"block_s": 0.4})
    outs = asyncio.run(_answers(system, _call("q000"), _call("q001")))
    latencies = [o.latency_s for o in outs if isinstance(o, AnswerOutcome)]
    assert len(latencies) == 2 and all(0.39 <= lat < 0.7 for lat in latencies), outs


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_latency_of_a_short_call_is_its_own_while_another_is_slow(
        tmp_path: Path, isolation: str) -> None:
    system = _system("logged_sleep", max_concurrency=2, isolation=isolation,
                     kwargs={"log": str(tmp_path / "log"), "sleep_s": 0.3, "slow_s": 1.2})
    slow, short = asyncio.run(_answers(system, _call("q000"), _call("q001")))
    assert isinstance(slow, AnswerOutcome) and isinstance(short, AnswerOutcome)
    assert 1.19 <= slow.latency_s < 1.8
    assert 0.29 <= short.latency_s < 0.7


SETUP = """import os

LOG = {log!r}


def load():
    with open(LOG, "a") as f:
        f.write(f"{{os.getpid()}}\\n")
    return {{"pid": os.getpid()}}


def broken():
    raise RuntimeError("model file missing: /models/x.gguf")
"""


def _setup_module(tmp: Path, name: str) -> Path:
    log = tmp / "setup.log"
    (tmp / f"{name}.py").write_text(SETUP.format(log=str(log)), "utf-8")
    return log


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_setup_runs_once_per_worker_and_reaches_the_target(tmp_path: Path,
                                                           isolation: str) -> None:
    name = f"setup_once_{isolation}"
    log = _setup_module(tmp_path, name)
    cfg = PythonSystemConfig(target=f"{FAKES}:with_resources", setup=f"{name}:load",
                             python_path=str(tmp_path), max_concurrency=2,
                             thread_safe=True, isolation=isolation)  # type: ignore[arg-type]
    system = PythonSystem("old", cfg, RunConfig(timeout_s=10, concurrency=4))
    outs = asyncio.run(_answers(system, *(_call(f"q00{i}") for i in range(6))))
    assert all(isinstance(o, AnswerOutcome) for o in outs), outs
    pids = [int(line) for line in log.read_text().split()]
    metas = [o.meta for o in outs if isinstance(o, AnswerOutcome)]
    if isolation == "thread":  # once per system, in this process
        assert pids == [os.getpid()]
        assert {m["setup_pid"] for m in metas} == {os.getpid()}
    else:  # once in each of the two workers, and each call gets its own worker's value
        assert len(pids) == len(set(pids)) == 2 and os.getpid() not in pids
        assert all(m["setup_pid"] == m["call_pid"] for m in metas)
        assert {m["setup_pid"] for m in metas} <= set(pids)


@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_a_failing_setup_is_a_config_error_naming_it(tmp_path: Path, isolation: str) -> None:
    name = f"setup_broken_{isolation}"
    _setup_module(tmp_path, name)
    cfg = PythonSystemConfig(target=f"{FAKES}:with_resources", setup=f"{name}:broken",
                             python_path=str(tmp_path),
                             isolation=isolation)  # type: ignore[arg-type]
    system = PythonSystem("old", cfg, RunConfig(timeout_s=10))
    out, = asyncio.run(_answers(system, _call("q000")))
    assert isinstance(out, ConfigError)
    assert f"setup '{name}:broken' failed: RuntimeError: model file missing" in str(out)
