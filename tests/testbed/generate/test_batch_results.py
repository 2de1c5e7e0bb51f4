"""Spooled batch results: matched by custom id from disk, unusable lines skipped, the last
line of a repeated id kept, files gone on close, and memory that does not grow with the file."""

from __future__ import annotations

import json
import os
from typing import Any

import pytest

from snapaudit.errors import TransportInvalid
from snapaudit.testbed.generate.batch_api import BatchHttp
from snapaudit.testbed.generate.batch_results import BatchResults, Result
from tests.fakes.batch_server import FakeBatchServer


def _convert(obj: dict[str, Any]) -> Result:
    if obj.get("ok"):
        return {"text": obj["text"]}
    return TransportInvalid("batch_request_error", detail=str(obj.get("text")))


def _spooled(body: bytes) -> BatchResults:
    results = BatchResults()
    f = results.spool()
    f.write(body)
    results.add_file(f, _convert)
    return results


def test_results_are_read_by_custom_id_and_bad_lines_skipped() -> None:
    lines = [json.dumps({"custom_id": "sa-b", "ok": True, "text": "Paris"}),
             "not json {", "", json.dumps(["no", "object"]), json.dumps({"custom_id": 7}),
             json.dumps({"custom_id": "sa-c", "ok": False, "text": "overloaded"}),
             json.dumps({"custom_id": "sa-a", "ok": True, "text": "first"}),
             json.dumps({"custom_id": "sa-a", "ok": True, "text": "Ünïcode last"})]
    with _spooled("\n".join(lines).encode() + b"\n") as results:
        assert len(results) == 3
        assert results.get("sa-b") == {"text": "Paris"}
        assert results.get("sa-a") == {"text": "Ünïcode last"}  # the last line of an id
        got = results.get("sa-c")
        assert isinstance(got, TransportInvalid) and got.detail == "overloaded"
        assert results.get("sa-missing") is None and "sa-missing" not in results
        files = list(results._files)
    assert all(f.closed for f in files) and len(results) == 0


def test_a_file_without_a_final_newline_keeps_its_last_line() -> None:
    body = json.dumps({"custom_id": "sa-z", "ok": True, "text": "end"}).encode()
    with _spooled(body) as results:
        assert results.get("sa-z") == {"text": "end"}


def _rss_mb() -> float:
    with open(f"/proc/{os.getpid()}/status") as f:
        return next(int(x.split()[1]) for x in f if x.startswith("VmRSS:")) / 1024


@pytest.mark.slow
def test_a_large_results_file_is_spooled_not_held() -> None:
    """60,000 results of 4 KB (about 250 MB of JSON) downloaded from a loopback server: the
    process grows by far less than the file (it used to hold the bytes and every object)."""
    import asyncio

    text = "x" * 4096
    body = b"".join(json.dumps({"custom_id": f"sa-{i:06d}", "ok": True, "text": text}).encode()
                    + b"\n" for i in range(60_000))
    size_mb = len(body) / 2**20

    async def fetch(url: str) -> tuple[float, dict[str, Any] | None, int]:
        http = BatchHttp(timeout_s=60.0, secret=None)
        try:
            before = _rss_mb()
            results = BatchResults()
            await http.download(url, {}, results, _convert)
            grown = _rss_mb() - before
            with results:
                got = results.get("sa-059999")
                return grown, got if isinstance(got, dict) else None, len(results)
        finally:
            await http.aclose()

    with FakeBatchServer() as server:
        server.files["big"] = body
        del body
        grown, last, n = asyncio.run(fetch(f"{server.openai_base_url}/files/big/content"))
    assert n == 60_000 and last == {"text": text}
    assert size_mb > 200 and grown < size_mb / 4, (grown, size_mb)
