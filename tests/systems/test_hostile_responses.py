"""Hostile responses: bombs and endless bodies are capped, deep JSON fails cleanly, and every
transport path (HTTP system, generator backends, search API) goes through the bounded read."""

from __future__ import annotations

import asyncio
import tracemalloc
from collections.abc import Iterator

import pytest

from snapaudit.errors import BackendError, TransportInvalid
from snapaudit.systems.base import AnswerCall
from snapaudit.systems.bounded import json_depth_exceeds, parse_json
from snapaudit.systems.config import HttpSystemConfig, RunConfig
from snapaudit.systems.http import HttpSystem
from snapaudit.testbed.generate._http import JsonPoster
from snapaudit.testbed.retrieval.config import HttpRetrieverConfig
from snapaudit.testbed.retrieval.http import HttpRetriever
from tests.fakes.hostile_service import SECRET, HostileService, bomb

CAP = 1 << 20  # 1 MiB under test; the 64 MiB bombs are 64 times over it


@pytest.fixture(scope="module")
def svc() -> Iterator[HostileService]:
    with HostileService(fault_share=1.0, faults_per_key=10**6) as s:
        yield s


def _answer(url: str, cap: int = CAP) -> None:
    system = HttpSystem("old", HttpSystemConfig(url=url, doc_ids_path=None),
                        RunConfig(timeout_s=10.0, max_response_bytes=cap))

    async def go() -> None:
        try:
            await system.answer(AnswerCall("q1", "what?", "old", 1, 1, 0))
        finally:
            await system.aclose()

    asyncio.run(go())


def _peak(fn: object) -> tuple[TransportInvalid, int]:
    tracemalloc.start()
    try:
        with pytest.raises(TransportInvalid) as info:
            fn()  # type: ignore[operator]
        return info.value, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("kind", ["gzip_bomb", "deflate_bomb", "endless"])
def test_http_system_caps_bombs_and_endless_bodies(svc: HostileService, kind: str) -> None:
    bomb(svc.bomb_bytes, 31), bomb(svc.bomb_bytes, 15)  # built before memory is traced
    exc, peak = _peak(lambda: _answer(svc.raw_url(kind)))
    assert exc.reason == "response_too_large"
    assert f"max_response_bytes = {CAP}" in exc.detail
    assert peak < 8 * CAP, f"peak {peak} bytes"  # the whole body would be 64 MiB or more


def test_declared_content_length_over_the_cap_is_refused_unread(svc: HostileService) -> None:
    with pytest.raises(TransportInvalid) as info:
        _answer(svc.raw_url("gzip_bomb"), cap=1024)  # the compressed bomb is ~64 KiB
    assert info.value.reason == "response_too_large"
    assert "declared by Content-Length" in info.value.detail


@pytest.mark.parametrize("kind", ["deep_json", "long_int"])
def test_unusable_json_is_transport_invalid_not_a_crash(svc: HostileService, kind: str) -> None:
    with pytest.raises(TransportInvalid) as info:
        _answer(svc.raw_url(kind))
    assert info.value.reason == "malformed_json"


def test_depth_scan_ignores_brackets_inside_strings() -> None:
    assert not json_depth_exceeds(b'{"a": "' + b"[" * 1000 + b'"}')
    assert json_depth_exceeds(b"[" * 129 + b"]" * 129)
    assert not json_depth_exceeds(b"[" * 128 + b"]" * 128)
    assert parse_json(b'{"a": "[[[\\"[", "b": [[1]]}') == {"a": '[[["[', "b": [[1]]}
    with pytest.raises(TransportInvalid, match="deeper than 128"):
        parse_json("[" * 100_000 + "]" * 100_000)


def _post(url: str) -> None:
    poster = JsonPoster(timeout_s=10.0, secret=SECRET, max_bytes=CAP)

    async def go() -> None:
        try:
            await poster.post(url, {"Authorization": f"Bearer {SECRET}"}, {"model": "m"})
        finally:
            await poster.aclose()

    asyncio.run(go())


@pytest.mark.parametrize(("kind", "reason"), [
    ("gzip_bomb", "response_too_large"), ("endless", "response_too_large"),
    ("deep_json", "malformed_json"), ("long_int", "malformed_json"),
    ("echo_text", "malformed_json"), ("echo_500", "http_500")])
def test_generator_backends_share_the_bounded_read(svc: HostileService, kind: str,
                                                  reason: str) -> None:
    with pytest.raises(TransportInvalid) as info:
        _post(svc.raw_url(kind))
    assert info.value.reason == reason
    assert SECRET not in str(info.value)


def test_generator_401_echo_is_masked(svc: HostileService) -> None:
    with pytest.raises(BackendError) as info:
        _post(svc.raw_url("echo_401"))
    message = str(info.value)
    assert "HTTP 401" in message and "sha256" in message and "[REDACTED]" in message
    assert SECRET not in message and "\x1b" not in message and "\x07" not in message


def test_search_api_is_bounded_too(svc: HostileService) -> None:
    retriever = HttpRetriever(HttpRetrieverConfig(url=svc.raw_url("deep_json")))

    async def go() -> None:
        try:
            await retriever.asearch("q", 1, 3)
        finally:
            await retriever.aclose()

    with pytest.raises(TransportInvalid, match="deeper than"):
        asyncio.run(go())
