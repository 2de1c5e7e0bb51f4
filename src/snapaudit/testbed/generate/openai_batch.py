"""The OpenAI Batch API: upload a JSONL file (``/files``, purpose ``batch``), create a batch
(``/batches``, completion window 24 h), poll it, read ``output_file_id`` and
``error_file_id`` (``/files/{id}/content``).

Every batch carries ``metadata.snapaudit_batch = <local batch id>``; :meth:`find` lists the
account's recent batches for it, so a create call whose answer was lost is never repeated.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import aiohttp

from snapaudit.errors import TransportInvalid
from snapaudit.systems.failure import R
from snapaudit.testbed.generate._http import join_url, public_url, read_api_key
from snapaudit.testbed.generate.base import GenerationRequest, GenerationResult
from snapaudit.testbed.generate.batch_api import (
    FIND_SLACK_S,
    PROVIDER_LIMITS,
    BatchHttp,
    BatchStatus,
    limits,
    since_epoch,
    status_error,
)
from snapaudit.testbed.generate.batch_results import BatchResults
from snapaudit.testbed.generate.config import OpenAIGeneratorConfig as GeneratorConfig
from snapaudit.testbed.generate.openai import DEFAULT_BASE_URL, OpenAIGenerator

MAX_REQUESTS, MAX_BYTES = PROVIDER_LIMITS["openai"]
ENDED = frozenset({"completed", "failed", "expired", "cancelled"})
METADATA_KEY = "snapaudit_batch"
ENDPOINT = "/v1/chat/completions"


class OpenAIBatch:
    backend = "openai"

    def __init__(self, config: GeneratorConfig, max_requests: int | None = None,
                 max_bytes: int | None = None):
        self._gen = OpenAIGenerator(config)
        self._base = config.base_url or DEFAULT_BASE_URL
        self.endpoint = public_url(self._base)
        self.key = f"openai|{self.endpoint}|{config.model}"
        self.max_requests, self.max_bytes = limits(MAX_REQUESTS, MAX_BYTES, max_requests,
                                                   max_bytes)
        key = read_api_key(config.api_key_env)
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._http = BatchHttp(max(config.timeout_s, 600.0), key)

    def _url(self, suffix: str) -> str:
        return join_url(self._base, suffix)

    def line(self, custom_id: str, request: GenerationRequest) -> bytes:
        entry = {"custom_id": custom_id, "method": "POST", "url": ENDPOINT,
                 "body": self._gen.request_body(request)}
        return (json.dumps(entry, ensure_ascii=False, separators=(",", ":")) + "\n").encode()

    def parse(self, request: GenerationRequest, body: dict[str, Any]) -> GenerationResult:
        return self._gen.parse(body, 0.0)

    async def submit(self, local_id: str, lines: Sequence[bytes]) -> str:
        form = aiohttp.FormData()
        form.add_field("purpose", "batch")
        form.add_field("file", b"".join(lines), filename=f"{local_id}.jsonl",
                       content_type="application/jsonl")
        uploaded = await self._http.json("POST", self._url("/files"), self._headers, data=form)
        file_id = _str(uploaded, "id", "file upload")
        created = await self._http.json("POST", self._url("/batches"), self._headers, json_body={
            "input_file_id": file_id, "endpoint": ENDPOINT, "completion_window": "24h",
            "metadata": {METADATA_KEY: local_id}})
        return _str(created, "id", "batch create")

    async def find(self, local_id: str, n_requests: int, since: float,
                   known: set[str]) -> str | None:
        after: str | None = None
        while True:
            query = "/batches?limit=100" + (f"&after={after}" if after else "")
            page = await self._http.json("GET", self._url(query), self._headers)
            data = [b for b in page.get("data") or [] if isinstance(b, dict)]
            for batch in data:
                meta = batch.get("metadata")
                if isinstance(meta, dict) and meta.get(METADATA_KEY) == local_id:
                    return _str(batch, "id", "batch list")
            created = [since_epoch(b.get("created_at")) for b in data]
            older = [c for c in created if c is not None and c < since - FIND_SLACK_S]
            if not data or older or not page.get("has_more"):
                return None  # newest first: past the window, nothing is ours
            after = str(data[-1].get("id"))

    async def _batch(self, provider_id: str) -> dict[str, Any]:
        return await self._http.json("GET", self._url(f"/batches/{provider_id}"), self._headers)

    async def poll(self, provider_id: str) -> BatchStatus:
        status = str((await self._batch(provider_id)).get("status"))
        return BatchStatus(status, status in ENDED)

    async def results(self, provider_id: str, into: BatchResults) -> None:
        batch = await self._batch(provider_id)
        for field in ("output_file_id", "error_file_id"):
            file_id = batch.get(field)
            if isinstance(file_id, str) and file_id:
                await self._http.download(self._url(f"/files/{file_id}/content"),
                                          self._headers, into, self._result)

    def _result(self, obj: dict[str, Any]) -> dict[str, Any] | TransportInvalid:
        error = obj.get("error")
        if isinstance(error, dict):
            code = str(error.get("code") or "error")
            reason = {"batch_expired": R.BATCH_EXPIRED,
                      "batch_cancelled": R.BATCH_CANCELLED}.get(code, R.BATCH_REQUEST_ERROR)
            return TransportInvalid(reason, detail=f"{code}: {str(error.get('message'))[:200]}")
        response = obj.get("response")
        if not isinstance(response, dict):
            return TransportInvalid(R.MALFORMED_BODY, detail="batch result has no response")
        status_code, body = response.get("status_code"), response.get("body")
        if status_code != 200 or not isinstance(body, dict):
            return status_error(status_code if isinstance(status_code, int) else 0,
                                self._http.excerpt(json.dumps(body).encode()))
        return body

    async def aclose(self) -> None:
        await self._http.aclose()
        await self._gen.aclose()


def _str(obj: dict[str, Any], key: str, where: str) -> str:
    value = obj.get(key)
    if not isinstance(value, str) or not value:
        raise TransportInvalid(R.MALFORMED_BODY, detail=f"{where}: no {key!r} in the response")
    return value
