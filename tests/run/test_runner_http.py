"""The runner's retry/ordering rules and the HTTP system adapter."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sqlite3
from pathlib import Path

import pytest
from aiohttp import web

from snapaudit.errors import BackendError, TransportInvalid
from snapaudit.progress import SilentProgress
from snapaudit.run.execution.committer import GroupCommitter
from snapaudit.run.execution.runner import CellResult, CellTask, RetryPolicy, paced_gc, run_cells
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.protocol import AuthConfig, HttpSystemConfig, RunConfig
from snapaudit.systems.base import AnswerCall
from snapaudit.systems.http import HttpSystem, lookup, render_body
from snapaudit.systems.transport import parse_retry_after
from tests.fakes.rag_service import FakeRagService


def test_render_body_is_one_pass_and_lookup_follows_paths() -> None:
    body = render_body({"q": "{question}", "meta": ["{question_id}", 3]},
                       {"question": "what is {question_id}?", "question_id": "7"})
    assert body == {"q": "what is {question_id}?", "meta": ["7", 3]}
    assert lookup({"a": [{"b": "x"}]}, "a.0.b") == "x"
    assert lookup({"a": []}, "a.0") is not None  # absent: a sentinel, never a value


def test_parse_retry_after() -> None:
    assert parse_retry_after("3") == 3.0
    assert parse_retry_after("0.25") == 0.25
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT") == 0.0
    assert parse_retry_after(None) is None


def test_run_cells_dispatches_in_order_bounded_and_retries(tmp_path: Path) -> None:
    order: list[str] = []
    inflight = {"now": 0, "max": 0}
    failures = {"c03": 2}

    def make(key: str) -> CellTask:
        async def call(attempt: int, seed: int) -> CellResult:
            if attempt == 1:
                order.append(key)
            inflight["now"] += 1
            inflight["max"] = max(inflight["max"], inflight["now"])
            await asyncio.sleep(0.01)
            inflight["now"] -= 1
            if failures.get(key, 0) >= attempt:
                raise TransportInvalid("http_500")
            return CellResult({"v": key, "seed": seed})
        return CellTask(key, {"k": key}, call)

    tasks = [make(f"c{i:02d}") for i in range(12)]
    with Ledger(tmp_path / "l.sqlite") as ledger:
        summary = asyncio.run(run_cells(ledger, "answer", tasks,
                                        RetryPolicy(concurrency=3, backoff_base_s=0.0),
                                        SilentProgress()))
        assert order == [t.cell_key for t in tasks]
        assert inflight["max"] == 3
        assert (summary.accepted_now, summary.attempts, summary.invalid) == (12, 14, 2)
        assert [a.attempt_no for a in ledger.attempts() if a.cell_key == "c03"] == [1, 2, 3]
        again = asyncio.run(run_cells(ledger, "answer", tasks, RetryPolicy(), SilentProgress()))
        assert (again.already_accepted, again.attempts) == (12, 0)


def test_non_retryable_error_is_recorded_and_raised(tmp_path: Path) -> None:
    async def call(attempt: int, seed: int) -> CellResult:
        raise BackendError("HTTP 404")

    with Ledger(tmp_path / "l.sqlite") as ledger:
        with pytest.raises(BackendError):
            asyncio.run(run_cells(ledger, "answer", [CellTask("k", {}, call)], RetryPolicy(),
                                  SilentProgress()))
        assert [(a.outcome, a.reason) for a in ledger.attempts()] == [("error", "BackendError")]


def test_retry_after_is_honoured(tmp_path: Path) -> None:
    svc = FakeRagService(fault_share=1.0, faults_per_key=1, fault_kinds=("429",),
                         retry_after="1")
    with svc:
        system = HttpSystem("old", HttpSystemConfig(
            url=svc.url("old"), body_template={"question_id": "{question_id}"}),
            RunConfig(timeout_s=5))

        async def call(attempt: int, seed: int) -> CellResult:
            out = await system.answer(AnswerCall("q1", "?", "old", 1, attempt, seed))
            return CellResult({"answer": out.answer})

        async def go(ledger: Ledger) -> None:
            try:
                await run_cells(ledger, "answer", [CellTask("q1|old|1", {}, call)],
                                RetryPolicy(backoff_base_s=0.0), SilentProgress())
            finally:
                await system.aclose()

        with Ledger(tmp_path / "l.sqlite") as ledger:
            asyncio.run(go(ledger))
    with contextlib.closing(sqlite3.connect(tmp_path / "l.sqlite")) as db:
        rows = db.execute("SELECT started_at, finished_at, reason FROM attempts ORDER BY id")
        (_, end1, reason), (start2, _, _) = rows.fetchall()
    assert reason == "http_429"
    assert start2 - end1 >= 0.95


def test_auth_header_from_env_and_not_in_spec(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[str] = []

    async def handler(request: web.Request) -> web.Response:
        seen.append(request.headers.get("X-Key", ""))
        return web.json_response({"out": {"text": "Paris", "ids": [1, "b"]}})

    async def go() -> tuple[str, tuple[str, ...] | None]:
        app = web.Application()
        app.router.add_post("/", handler)
        runner = web.AppRunner(app)
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = runner.addresses[0][1]
        cfg = HttpSystemConfig(url=f"http://127.0.0.1:{port}/", answer_path="out.text",
                               doc_ids_path="out.ids",
                               auth=AuthConfig(header="X-Key", env="SNAPAUDIT_TEST_KEY",
                                               prefix="k-"))
        system = HttpSystem("new", cfg, RunConfig())
        try:
            out = await system.answer(AnswerCall("q", "capital?", "new", 1, 1, 5))
        finally:
            await system.aclose()
            await runner.cleanup()
        assert "sekret" not in repr(system.spec())
        return out.answer, out.doc_ids

    monkeypatch.setenv("SNAPAUDIT_TEST_KEY", "sekret")
    assert asyncio.run(go()) == ("Paris", ("1", "b"))
    assert seen == ["k-sekret"]


def test_token_bucket_spaces_acquisitions() -> None:
    import time

    from snapaudit.systems.transport import TokenBucket

    async def go() -> float:
        bucket = TokenBucket(50.0, burst=1.0)
        start = time.monotonic()
        for _ in range(11):
            await bucket.acquire()
        return time.monotonic() - start

    assert asyncio.run(go()) >= 10 / 50.0 * 0.95  # the first token is free, then 1 per 20 ms


def test_paced_gc_is_shared_by_overlapping_stages_and_restored_by_the_last() -> None:
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    first, second = paced_gc(), paced_gc()
    first.__enter__()
    assert gc.get_threshold()[0] >= 20_000 and gc.get_freeze_count() >= frozen
    second.__enter__()
    first.__exit__(None, None, None)  # overlapping, not nested: the second still runs
    assert gc.get_threshold()[0] >= 20_000
    second.__exit__(None, None, None)
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen


def test_group_committer_answers_each_write_and_commits_what_is_queued_on_close(
        tmp_path: Path) -> None:
    def bad(ledger: Ledger) -> None:
        ledger.begin_attempt_op("answer", "k0", "h")  # rolled back with its op
        raise ValueError("refused")

    async def main(ledger: Ledger) -> list[object]:
        writer = GroupCommitter(ledger)
        calls = [writer.call(lambda lg, k=k: lg.begin_attempt_op("answer", k, "h"))
                 for k in ("k1", "k2")]
        results = await asyncio.gather(*calls, writer.call(bad), return_exceptions=True)
        queued = asyncio.ensure_future(writer.call(
            lambda lg: lg.begin_attempt_op("answer", "k3", "h")))
        await asyncio.sleep(0)  # queued before the close marker
        await writer.aclose()
        return [*results, await queued]

    with Ledger(tmp_path / "l.sqlite") as ledger:
        first, second, error, last = asyncio.run(main(ledger))
        assert isinstance(error, ValueError) and {first, second, last} == {1, 2, 3}
        assert [a.cell_key for a in ledger.attempts()] == ["k1", "k2", "k3"]
