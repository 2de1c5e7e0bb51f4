"""One outgoing HTTP client, one vocabulary of failure reasons.

The same HTTP status from a RAG service (HTTP system), a generator endpoint, a batch API
call and a hosted retrieval service gives the same :class:`FailureReason` and the same
retry / fatal / transient decision; hosted retrieval waits on the event loop, never blocks it.
"""

from __future__ import annotations

import ast
import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from snapaudit.errors import BackendError, NotFoundError, TransportInvalid
from snapaudit.progress import SilentProgress
from snapaudit.run.engine import run_protocol_file
from snapaudit.run.execution.failures import FailureLog
from snapaudit.systems.base import AnswerCall
from snapaudit.systems.config import HttpSystemConfig, RunConfig
from snapaudit.systems.failure import TRANSIENT, FailureReason, classify_status, is_transient
from snapaudit.systems.http import HttpSystem
from snapaudit.testbed.generate.base import GenerationRequest
from snapaudit.testbed.generate.batch_api import BatchHttp, status_error
from snapaudit.testbed.generate.config import generator_config
from snapaudit.testbed.generate.openai import OpenAIGenerator
from snapaudit.testbed.retrieval.config import HttpRetrieverConfig, TestbedConfig
from snapaudit.testbed.retrieval.evidence import EvidenceBuilder
from snapaudit.testbed.retrieval.http import HttpRetriever
from tests.fakes.llm_server import FakeLLMServer
from tests.fakes.loopback import LoopbackServer
from tests.helpers.ledger_view import query
from tests.helpers.protocol import write_testbed_protocol, write_testbed_world

SRC = Path(__file__).resolve().parents[2] / "src" / "snapaudit"
DELAY_S = 1.0


class StatusServer(LoopbackServer):
    """``/status/{code}/...`` answers that status (Retry-After: 1 on 429); ``/slow/...``
    answers two search results after :data:`DELAY_S`."""

    def __init__(self) -> None:
        super().__init__()
        self.in_flight = 0
        self.max_in_flight = 0
        self.search_faults = 0  # the next N /search requests answer 503

    def routes(self, app: web.Application) -> None:
        app.router.add_route("*", "/status/{code}/{tail:.*}", self._status)
        app.router.add_route("*", "/slow/{tail:.*}", self._slow)
        app.router.add_route("POST", "/search", self._search)

    async def _search(self, request: web.Request) -> web.Response:
        if self.search_faults:
            self.search_faults -= 1
            return web.json_response({"error": "busy"}, status=503)
        params = await request.json()
        n = int(params["shards"])
        return web.json_response({"results": [
            {"id": f"s{n}-{i}", "url": "", "text": f"{params['query']} {i}"} for i in range(2)]})

    async def _status(self, request: web.Request) -> web.Response:
        code = int(request.match_info["code"])
        headers = {"Retry-After": "1"} if code == 429 else {}
        return web.json_response({"error": f"status {code}"}, status=code, headers=headers)

    async def _slow(self, request: web.Request) -> web.Response:
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            await asyncio.sleep(DELAY_S)
        finally:
            self.in_flight -= 1
        return web.json_response({"results": [
            {"id": "d1", "url": "u1", "text": "one"}, {"id": "d2", "url": "u2", "text": "two"}]})

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"


@pytest.fixture(scope="module")
def server() -> Iterator[StatusServer]:
    with StatusServer() as srv:
        yield srv


async def _rag(url: str) -> None:
    system = HttpSystem("old", HttpSystemConfig(url=url), RunConfig(timeout_s=5.0))
    try:
        await system.answer(AnswerCall("q1", "what?", "old", 1, 1, 0))
    finally:
        await system.aclose()


async def _generator(url: str) -> None:
    gen = OpenAIGenerator(generator_config(backend="openai", model="m", base_url=url))
    try:
        await gen.generate(GenerationRequest(system="s", user="u", seed=1))
    finally:
        await gen.aclose()


async def _batch_api(url: str) -> None:
    http = BatchHttp(timeout_s=5.0, secret=None)
    try:
        await http.json("GET", url + "/batches/b1", {})
    finally:
        await http.aclose()


async def _retrieval(url: str) -> None:
    retriever = HttpRetriever(HttpRetrieverConfig(url=url, timeout_s=5.0))
    try:
        await retriever.asearch("q", 1, 2)
    finally:
        await retriever.aclose()


CALLS: dict[str, Callable[[str], Awaitable[None]]] = {
    "rag_service": _rag, "generator": _generator, "batch_api": _batch_api,
    "retrieval": _retrieval}


def _outcome(call: Callable[[str], Awaitable[None]], url: str) -> tuple[type, str | None,
                                                                          float | None]:
    try:
        asyncio.run(call(url))
    except TransportInvalid as exc:
        return TransportInvalid, exc.reason, exc.retry_after
    except BackendError as exc:
        assert "refused the call" in str(exc) and "not retryable" in str(exc)
        return type(exc), None, None
    raise AssertionError("the call did not fail")


@pytest.mark.parametrize("status", [503, 500, 502, 504, 529, 501, 429, 408, 409, 425,
                                    400, 401, 403, 404, 422])
def test_one_status_one_reason_one_decision_for_every_kind_of_call(
        server: StatusServer, status: int) -> None:
    outcomes = {kind: _outcome(call, server.url(f"/status/{status}/x"))
                for kind, call in CALLS.items()}
    assert len(set(outcomes.values())) == 1, outcomes
    kind, reason, retry_after = outcomes["rag_service"]
    expected = classify_status(status)
    if expected is None:  # fatal: never retried, 404 distinguishable
        assert kind is (NotFoundError if status == 404 else BackendError)
        assert status in (400, 401, 403, 404, 422)
        return
    assert kind is TransportInvalid and reason == expected
    assert reason == (f"http_{status}" if status != 501 else "http_5xx")
    assert retry_after == (1.0 if status == 429 else None)
    # inside a provider batch the same status is the same reason
    assert status_error(status, "x").reason == reason
    # and the fail-fast decision is one: transient reasons never stop a stage
    log = FailureLog("answer")
    stops = [log.record(f"q{i}|old|1", reason, "same") for i in range(12)]
    assert (all(s is None for s in stops)) == is_transient(reason)
    assert is_transient(reason) == (status in (408, 425, 429, 502, 503, 504, 529))


def test_a_fatal_status_inside_a_batch_is_a_request_error_not_a_stop() -> None:
    assert status_error(400, "x").reason == FailureReason.BATCH_REQUEST_ERROR
    assert status_error(404, "x").reason == FailureReason.BATCH_REQUEST_ERROR


def test_hosted_retrieval_does_not_block_the_event_loop(server: StatusServer) -> None:
    testbed = TestbedConfig(states={"n1": 1}, top_k=2,
                            retriever=HttpRetrieverConfig(url=server.url("/slow/s")))
    builders = [EvidenceBuilder(testbed, None) for _ in range(2)]
    ticks: list[float] = []

    async def heartbeat() -> None:
        while True:
            ticks.append(time.monotonic())
            await asyncio.sleep(0.05)

    async def go() -> tuple[float, list[Any]]:
        beat = asyncio.create_task(heartbeat())
        start = time.monotonic()
        try:
            got = await asyncio.gather(*(b.evidence(f"q{i}", "x", "n1")
                                         for i, b in enumerate(builders)))
            return time.monotonic() - start, list(got)
        finally:
            beat.cancel()
            for b in builders:
                await b.aclose()

    elapsed, got = asyncio.run(go())
    assert all(ev is not None and ev.doc_ids == ("d1", "d2") for ev in got)
    assert server.max_in_flight == 2  # both waited on the service at once
    assert elapsed < 1.8 * DELAY_S, elapsed  # ~1x the delay; one after the other is 2x
    assert len(ticks) >= DELAY_S / 0.05 / 2  # the loop kept running while they waited


def _literal_reasons(paths: Iterable[Path] | None = None) -> set[str]:
    """Every string literal passed as the reason of a TransportInvalid in ``paths`` (default:
    the package)."""
    found: set[str] = set()
    for path in SRC.rglob("*.py") if paths is None else paths:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                    and node.func.id == "TransportInvalid" and node.args
                    and isinstance(node.args[0], ast.Constant)):
                found.add(str(node.args[0].value))
    return found


def test_every_reason_raised_is_a_member_of_the_one_enum() -> None:
    # TransportInvalid takes a FailureReason (mypy; a ValueError at run time): no raiser
    # spells a reason as a string literal any more
    assert _literal_reasons() == set()
    assert _literal_reasons([Path(__file__)]) == {"http_503", "not_a_reason"}  # (the walk)
    assert set(FailureReason) >= TRANSIENT
    for old in ("http_4xx", "http 503", "unparseable body", "unmappable body"):
        assert old not in {r.value for r in FailureReason}


def test_the_docs_list_every_reason() -> None:
    text = (SRC.parents[1] / "docs" / "engine.md").read_text(encoding="utf-8")
    missing = [r.value for r in FailureReason if f"`{r.value}`" not in text]
    assert missing == []


def test_a_testbed_run_retrieves_from_a_hosted_service_through_the_one_client(
        server: StatusServer, tmp_path: Path) -> None:
    corpus = write_testbed_world(tmp_path)
    with FakeLLMServer(responder=lambda call: '{"answer": "x"}') as llm:
        proto = write_testbed_protocol(tmp_path, corpus, f'backend = "openai"\nmodel = "m"\n'
                               f'base_url = "{llm.openai_base_url}"')
        with proto.open("a", encoding="utf-8") as f:
            f.write(f'[testbed.retriever]\nkind = "http"\nurl = "{server.url("/search")}"\n'
                    'prefix_param = "shards"\n')
        server.search_faults = 1
        run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
    db = tmp_path / "run" / "ledger.sqlite"
    cells = query(db, "SELECT cell_key, payload FROM cells WHERE stage='retrieval'")
    assert len(cells) == 6 * 3 * 2  # 6 questions, 3 states, 2 passes
    n3 = [json.loads(p) for k, p in cells if "|n3|" in k]
    assert n3 and all(p["evidence"]["doc_ids"] == ["s3-0", "s3-1"] for p in n3)
    failed = query(db, "SELECT reason FROM attempts WHERE stage='retrieval' "
                       "AND outcome='transport_invalid'")
    assert failed == [(FailureReason.HTTP_503.value,)]


def test_a_transport_failure_carries_a_failure_reason() -> None:
    """``TransportInvalid.reason`` is typed: a value of the vocabulary becomes its member, and
    a reason outside it is refused at once (before: any string reached the ledger)."""
    exc = TransportInvalid("http_503")
    assert exc.reason is FailureReason.HTTP_503 and str(exc) == "http_503"
    with pytest.raises(ValueError):
        TransportInvalid("not_a_reason")  # type: ignore[arg-type]
    # every reason the ledger writes is in the vocabulary, the forgotten batches' too
    assert FailureReason("batch_forgotten") is FailureReason.BATCH_FORGOTTEN
