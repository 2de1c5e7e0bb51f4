"""What the HTTP backends share: the API key, one aiohttp session, the error mapping.

Every failure of one call maps to :class:`TransportInvalid` with a short reason
(``http_429``, ``http_5xx``, ``http_4xx``, ``timeout``, ``connection``,
``malformed_body``) and, when the server sent one, ``retry_after`` in seconds.
401, 403 and 404 mean the configuration is wrong (key, model, URL): they raise
:class:`BackendError` and are not retried. The API key is read from the
environment only and redacted from every message this module builds.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from snapaudit.errors import BackendError, NotFoundError, TransportInvalid
from snapaudit.systems.bounded import (
    ACCEPT_ENCODING,
    DEFAULT_MAX_RESPONSE_BYTES,
    copy_body,
    parse_json,
    read_body,
)
from snapaudit.systems.redact import body_excerpt, redact, register_secret
from snapaudit.systems.transport import parse_retry_after
from snapaudit.testbed.generate.config import GeneratorConfig

_NOT_RETRYABLE = frozenset({401, 403, 404})


def read_api_key(env_name: str | None) -> str | None:
    """The key from the environment variable named in the protocol; None if none is named."""
    if env_name is None:
        return None
    key = os.environ.get(env_name, "")
    if not key:
        raise BackendError(f"environment variable {env_name} (api_key_env) is not set or empty")
    register_secret(key)
    return key


def public_url(url: str) -> str:
    """``url`` without user info, query or fragment: what may appear in a spec."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def join_url(base: str, suffix: str) -> str:
    """``suffix`` appended to the path of ``base``, keeping its query (e.g. an api-version)."""
    parts = urlsplit(base)
    return urlunsplit(parts._replace(path=parts.path.rstrip("/") + suffix))


def left_to_provider(config: GeneratorConfig, *, supports_seed: bool = True) -> list[str]:
    """The sampling controls this call leaves to the provider's defaults."""
    left = [name for name in ("temperature", "top_p") if getattr(config, name) is None]
    if not (config.seed_per_call and supports_seed):
        left.append("seed")
    return left


class JsonPoster:
    """POSTs JSON and returns the decoded JSON object, one aiohttp session per event loop."""

    def __init__(self, timeout_s: float, secret: str | None,
                 max_bytes: int = DEFAULT_MAX_RESPONSE_BYTES):
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._secrets = (secret,) if secret else ()
        self._max_bytes = max_bytes
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    async def _get_session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            # The engine bounds concurrency; the connector must not add a second cap.
            self._session = aiohttp.ClientSession(
                timeout=self._timeout, connector=aiohttp.TCPConnector(limit=0),
                auto_decompress=False,  # read_body decompresses under the response cap
            )
            self._loop = loop
        return self._session

    async def post(
        self, url: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[dict[str, Any], float]:
        """(decoded body, latency in seconds) of one call; TransportInvalid on failure."""
        start = time.perf_counter()
        parts: list[bytes] = []
        await self._request("POST", url, headers, parts.append, self._max_bytes, json=body)
        latency = time.perf_counter() - start
        return self._decode(b"".join(parts)), latency

    async def _request(self, method: str, url: str, headers: dict[str, str],
                       write: Callable[[bytes], object], max_bytes: int, *,
                       timeout: aiohttp.ClientTimeout | None = None, **kw: Any) -> None:
        """One call; a 2xx body goes to ``write`` (at most ``max_bytes``), an error status
        raises (:meth:`_raise_status`), a timeout or connection error is TransportInvalid."""
        session = await self._get_session()
        try:
            async with session.request(method, url, headers={
                    **headers, "Accept-Encoding": ACCEPT_ENCODING},
                    timeout=timeout or self._timeout, **kw) as response:
                if response.status >= 400:
                    raw = await read_body(response, self._max_bytes)
                    self._raise_status(response.status, raw, parse_retry_after(
                        response.headers.get("Retry-After")))
                await copy_body(response, max_bytes, write)
        except TimeoutError:  # a download has no total limit, only timeout_s between bytes
            raise TransportInvalid("timeout", detail=f"no response within "
                                   f"{self._timeout.total} s") from None
        except aiohttp.ClientError as exc:
            detail = redact(f"{type(exc).__name__}: {exc}", self._secrets)
            raise TransportInvalid("connection", detail=detail) from None

    def _raise_status(self, status: int, raw: bytes, retry_after: float | None) -> None:
        detail = f"HTTP {status}: {body_excerpt(raw, self._secrets)}"
        if status in _NOT_RETRYABLE:  # 404: NotFoundError (a deleted batch, a wrong URL)
            error = NotFoundError if status == 404 else BackendError
            raise error(f"the generator endpoint refused the call ({detail})")
        if status == 429:
            reason = "http_429"
        elif status >= 500:
            reason = "http_5xx"
        else:
            reason = "http_4xx"
        raise TransportInvalid(reason, detail=detail, retry_after=retry_after)

    def _decode(self, raw: bytes) -> dict[str, Any]:
        try:
            value = parse_json(raw)
        except TransportInvalid as exc:
            raise TransportInvalid(exc.reason, detail=f"{exc.detail}; "
                                   f"{body_excerpt(raw, self._secrets)}") from None
        if not isinstance(value, dict):
            raise TransportInvalid("malformed_body", detail="response body is not a JSON object")
        return value

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None
        self._loop = None


def usage_ints(usage: Any, mapping: dict[str, str]) -> dict[str, int]:
    """Token counts from a provider usage object, renamed by ``mapping`` (source -> ours)."""
    if not isinstance(usage, dict):
        return {}
    out: dict[str, int] = {}
    for source, ours in mapping.items():
        value = usage.get(source)
        if isinstance(value, int) and not isinstance(value, bool):
            out[ours] = value
    return out
