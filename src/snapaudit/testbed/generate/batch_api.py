"""What the provider batch APIs share: the provider interface, the HTTP client, the limits.

A :class:`BatchProvider` turns generation requests into the lines of one provider batch,
sends a batch (``submit``), finds a batch it may have sent when the create call's answer
was lost (``find``), polls it and reads its results, keyed by ``custom_id``. It never
touches the ledger: :mod:`snapaudit.run.execution.batch` owns durability. Implementations:
:mod:`.openai_batch` (OpenAI Batch API) and :mod:`.anthropic_batch` (Message Batches).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import aiohttp

from snapaudit.errors import ConfigError, TransportInvalid
from snapaudit.systems.failure import R, classify_status
from snapaudit.systems.redact import body_excerpt
from snapaudit.testbed.generate._http import JsonPoster, json_object
from snapaudit.testbed.generate.base import GenerationRequest, GenerationResult
from snapaudit.testbed.generate.batch_results import BatchResults, Convert

# A results file is spooled to disk (:mod:`.batch_results`); this caps one file.
RESULTS_MAX_BYTES = 16 * 1024**3
# Batches created more than this long before the local 'submitting' record are not ours.
FIND_SLACK_S = 600.0

# requests and bytes per batch, by backend (OpenAI: 50,000 and 200 MB; Anthropic: 100,000
# and 256 MB); run.batch_max_requests / run.batch_max_bytes may only lower them
PROVIDER_LIMITS = {"openai": (50_000, 200 * 1024 * 1024), "anthropic": (100_000, 256 * 1024**2)}


@dataclass(frozen=True, slots=True)
class BatchStatus:
    status: str  # the provider's word (in_progress, completed, expired, ended, ...)
    ended: bool  # terminal: its results can be read; no request of it will run any more


class BatchProvider(Protocol):
    backend: str
    endpoint: str  # public URL, never a secret
    key: str  # requests with one key may share a batch (backend, endpoint, model)
    max_requests: int
    max_bytes: int

    def line(self, custom_id: str, request: GenerationRequest) -> bytes:
        """One request of a batch, serialized (its size counts against ``max_bytes``)."""
        ...

    def parse(self, request: GenerationRequest, body: dict[str, Any]) -> GenerationResult:
        """A successful request's response body as a result; TransportInvalid if unusable."""
        ...

    async def submit(self, local_id: str, lines: Sequence[bytes]) -> str:
        """Send one batch; the provider's batch id."""
        ...

    async def find(self, local_id: str, n_requests: int, since: float,
                   known: set[str]) -> str | None:
        """The id of a batch sent for ``local_id`` whose create call's answer was lost."""
        ...

    async def poll(self, provider_id: str) -> BatchStatus:
        ...

    async def results(self, provider_id: str, into: BatchResults) -> None:
        """Download the ended batch's results into ``into`` (which the caller closes)."""
        ...

    async def aclose(self) -> None:
        ...


def limits(default_requests: int, default_bytes: int, max_requests: int | None,
           max_bytes: int | None) -> tuple[int, int]:
    """The configured limits, never above the provider's own."""
    if max_requests is not None and max_requests > default_requests:
        raise ConfigError(f"run.batch_max_requests = {max_requests} is over the provider's "
                          f"limit of {default_requests}")
    if max_bytes is not None and max_bytes > default_bytes:
        raise ConfigError(f"run.batch_max_bytes = {max_bytes} is over the provider's limit "
                          f"of {default_bytes}")
    return max_requests or default_requests, max_bytes or default_bytes


class BatchHttp(JsonPoster):
    """The one client for batch calls: any method, JSON or form bodies, bodies capped;
    results files spooled to disk."""

    async def json(self, method: str, url: str, headers: dict[str, str], *,
                   json_body: Any = None, data: Any = None) -> dict[str, Any]:
        return json_object(await self.request_json(method, url, headers, json=json_body,
                                                   data=data))

    async def download(self, url: str, headers: dict[str, str], results: BatchResults,
                       convert: Convert) -> None:
        """GET a results file into ``results`` (spooled chunk by chunk, then indexed); no
        total time limit, but ``timeout_s`` without a byte stops it."""
        f = results.spool()
        timeout = aiohttp.ClientTimeout(total=None, sock_read=self.timeout.total)
        await self.request("GET", url, headers, f.write, max_bytes=RESULTS_MAX_BYTES,
                           timeout=timeout)
        results.add_file(f, convert)

    def excerpt(self, raw: bytes) -> str:
        return body_excerpt(raw, self.secrets)


def status_error(status: int, detail: str) -> TransportInvalid:
    """A failed request inside a batch, by its HTTP status: the reason of the same status
    from a synchronous call (:func:`~snapaudit.systems.failure.classify_status`), or
    ``batch_request_error`` for a status that would be fatal there (one request's error must
    not stop the batch)."""
    reason = classify_status(status) or R.BATCH_REQUEST_ERROR
    return TransportInvalid(reason, detail=f"in batch: HTTP {status}: {detail}")


def since_epoch(value: Any) -> float | None:
    """A provider timestamp (epoch seconds or RFC 3339) as epoch seconds."""
    from datetime import datetime

    if isinstance(value, int | float) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        try:
            return datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    return None
