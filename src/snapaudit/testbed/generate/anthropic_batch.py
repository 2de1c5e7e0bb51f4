"""Anthropic Message Batches: ``POST /v1/messages/batches`` with the requests inline, poll
``GET /v1/messages/batches/{id}`` until ``ended``, read the JSONL at ``results_url``.

Message batches carry no metadata, so :meth:`find` (a create call whose answer was lost)
lists the recent batches and takes the oldest one created at most ``FIND_SLACK_S`` before
the local 'submitting' record, with exactly the local batch's number of requests and not
yet recorded by this run. Its results are matched by custom id like any other: a request
of the local batch missing from them is retried.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from snapaudit.errors import TransportInvalid
from snapaudit.systems.failure import R
from snapaudit.testbed.generate._http import join_url, public_url, read_api_key
from snapaudit.testbed.generate.anthropic import DEFAULT_BASE_URL, AnthropicGenerator
from snapaudit.testbed.generate.base import GenerationRequest, GenerationResult
from snapaudit.testbed.generate.batch_api import (
    FIND_SLACK_S,
    PROVIDER_LIMITS,
    BatchHttp,
    BatchStatus,
    limits,
    since_epoch,
)
from snapaudit.testbed.generate.batch_results import BatchResults
from snapaudit.testbed.generate.config import AnthropicGeneratorConfig as GeneratorConfig

MAX_REQUESTS, MAX_BYTES = PROVIDER_LIMITS["anthropic"]
PATH = "/v1/messages/batches"


class AnthropicBatch:
    backend = "anthropic"

    def __init__(self, config: GeneratorConfig, max_requests: int | None = None,
                 max_bytes: int | None = None):
        self._gen = AnthropicGenerator(config)
        self._base = config.base_url or DEFAULT_BASE_URL
        self.endpoint = public_url(join_url(self._base, PATH))
        self.key = f"anthropic|{self.endpoint}|{config.model}"
        self.max_requests, self.max_bytes = limits(MAX_REQUESTS, MAX_BYTES, max_requests,
                                                   max_bytes)
        key = read_api_key(config.api_key_env)
        self._headers = {"anthropic-version": config.anthropic_version}
        if key:
            self._headers["x-api-key"] = key
        self._http = BatchHttp(max(config.timeout_s, 600.0), key)

    def line(self, custom_id: str, request: GenerationRequest) -> bytes:
        entry = {"custom_id": custom_id, "params": self._gen.request_body(request)}
        return json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode() + b","

    def parse(self, request: GenerationRequest, body: dict[str, Any]) -> GenerationResult:
        return self._gen.parse(request, body, 0.0)

    async def submit(self, local_id: str, lines: Sequence[bytes]) -> str:
        body = b'{"requests":[' + b"".join(lines).rstrip(b",") + b"]}"
        created = await self._http.json("POST", join_url(self._base, PATH), {
            **self._headers, "Content-Type": "application/json"}, data=body)
        return _id(created)

    async def find(self, local_id: str, n_requests: int, since: float,
                   known: set[str]) -> str | None:
        after: str | None = None
        found: list[tuple[float, str]] = []
        while True:
            query = PATH + "?limit=100" + (f"&after_id={after}" if after else "")
            page = await self._http.json("GET", join_url(self._base, query), self._headers)
            data = [b for b in page.get("data") or [] if isinstance(b, dict)]
            stop = not data or not page.get("has_more")
            for batch in data:
                created = since_epoch(batch.get("created_at"))
                counts = batch.get("request_counts")
                total = sum(v for v in counts.values() if isinstance(v, int)) \
                    if isinstance(counts, dict) else -1
                if created is None or created < since - FIND_SLACK_S:
                    stop = True
                    continue
                if total == n_requests and str(batch.get("id")) not in known:
                    found.append((created, str(batch.get("id"))))
            if stop:
                return min(found)[1] if found else None
            after = str(page.get("last_id") or data[-1].get("id"))

    async def _batch(self, provider_id: str) -> dict[str, Any]:
        return await self._http.json("GET", join_url(self._base, f"{PATH}/{provider_id}"),
                                     self._headers)

    async def poll(self, provider_id: str) -> BatchStatus:
        status = str((await self._batch(provider_id)).get("processing_status"))
        return BatchStatus(status, status == "ended")

    async def results(self, provider_id: str, into: BatchResults) -> None:
        url = (await self._batch(provider_id)).get("results_url")
        if isinstance(url, str) and url:
            await self._http.download(url, self._headers, into, _result)

    async def aclose(self) -> None:
        await self._http.aclose()
        await self._gen.aclose()


def _result(obj: dict[str, Any]) -> dict[str, Any] | TransportInvalid:
    result = obj.get("result")
    kind = result.get("type") if isinstance(result, dict) else None
    if kind == "succeeded" and isinstance(result, dict) and isinstance(result.get("message"),
                                                                       dict):
        message: dict[str, Any] = result["message"]
        return message
    if kind in ("expired", "canceled"):
        return TransportInvalid(R.BATCH_CANCELLED if kind == "canceled" else R.BATCH_EXPIRED,
                                detail=f"request {kind} in its batch")
    if kind == "errored" and isinstance(result, dict):
        error = result.get("error")
        inner = error.get("error") if isinstance(error, dict) else None
        what = inner if isinstance(inner, dict) else error if isinstance(error, dict) else {}
        return TransportInvalid(R.BATCH_REQUEST_ERROR, detail=f"{what.get('type')}: "
                                f"{str(what.get('message'))[:200]}")
    return TransportInvalid(R.MALFORMED_BODY, detail="batch result of unknown type")


def _id(obj: dict[str, Any]) -> str:
    value = obj.get("id")
    if not isinstance(value, str) or not value:
        raise TransportInvalid(R.MALFORMED_BODY, detail="batch create: no 'id' in the response")
    return value
