"""The one outgoing HTTP client (:class:`HttpClient`): HTTP systems, generator and judge
backends, provider batch APIs and hosted retrievers all call through it.

One aiohttp session per event loop, a token bucket, Retry-After, bounded reads
(:mod:`snapaudit.systems.bounded`), redacted body excerpts (:mod:`snapaudit.systems.redact`)
and the one status policy and failure vocabulary of :mod:`snapaudit.systems.failure`.

aiohttp was chosen by measurement (loopback server answering after 200 ms, 2,000
requests): it kept 92% of the ideal rate at concurrency 64 where httpx and the openai SDK
fell far behind. Every retryable failure becomes :class:`TransportInvalid` with a
:class:`~snapaudit.systems.failure.FailureReason`; the runner decides whether and when to
retry.
"""

from __future__ import annotations

import asyncio
import contextlib
import email.utils
import errno
import socket
import ssl
import time
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import aiohttp

from snapaudit.errors import BackendError, ConfigError, NotFoundError, TransportInvalid
from snapaudit.systems.bounded import (
    ACCEPT_ENCODING,
    DEFAULT_MAX_RESPONSE_BYTES,
    copy_body,
    parse_json,
    read_body,
)
from snapaudit.systems.failure import R, classify_status
from snapaudit.systems.redact import Secrets, body_excerpt, redact


class TokenBucket:
    """At most ``rate`` acquisitions per second on average, bursts up to ``burst``."""

    def __init__(self, rate: float | None, burst: float | None = None):
        self.rate = rate
        self.capacity = burst if burst is not None else max(1.0, rate or 1.0)
        self._tokens = self.capacity
        self._last = time.monotonic()
        self._lock = asyncio.Lock()

    async def acquire(self) -> None:
        if self.rate is None:
            return
        async with self._lock:
            while True:
                now = time.monotonic()
                self._tokens = min(self.capacity, self._tokens + (now - self._last) * self.rate)
                self._last = now
                if self._tokens >= 1.0:
                    self._tokens -= 1.0
                    return
                await asyncio.sleep((1.0 - self._tokens) / self.rate)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds from a Retry-After header: delta-seconds (decimals accepted) or an HTTP date."""
    if value is None or not value.strip():
        return None
    try:
        return max(0.0, float(value.strip()))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value.strip())
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(0.0, (when - datetime.now(UTC)).total_seconds())


def public_url(url: str) -> str:
    """``url`` without user info, query or fragment: what may appear in a spec or message."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path.rstrip("/"), "", ""))


def connection_detail(exc: BaseException, url: str) -> str:
    """A failed connection in words, naming :func:`public_url` and the reason: refused,
    reset, closed, DNS, TLS (else the exception's type and text)."""
    where = public_url(url)
    os_error = getattr(exc, "os_error", None) if isinstance(exc, aiohttp.ClientOSError) \
        else None
    os_error = os_error if isinstance(os_error, OSError) else exc
    errno_ = getattr(os_error, "errno", None)
    if isinstance(exc, aiohttp.ClientConnectorDNSError) or isinstance(os_error, socket.gaierror):
        return f"DNS lookup failed for {where}: {_strerror(os_error)}"
    if isinstance(exc, aiohttp.ClientSSLError) or isinstance(os_error, ssl.SSLError):
        return f"TLS handshake with {where} failed: {_strerror(os_error)}"
    if isinstance(os_error, ConnectionRefusedError) or errno_ == errno.ECONNREFUSED:
        return f"connection refused by {where}"
    if isinstance(os_error, ConnectionResetError) or errno_ == errno.ECONNRESET:
        return f"connection reset by {where}"
    if isinstance(exc, aiohttp.ServerDisconnectedError):
        return f"connection closed by {where} before a complete response"
    if isinstance(exc, aiohttp.ClientConnectorError):
        return f"cannot connect to {where}: {_strerror(os_error)}"
    if isinstance(exc, aiohttp.ClientPayloadError):
        return f"incomplete response body from {where}: {exc}"
    return f"{type(exc).__name__} calling {where}: {exc}"


def _strerror(exc: BaseException) -> str:
    text = getattr(exc, "strerror", None) or str(exc)
    return str(text) or type(exc).__name__


def raise_for_status(status: int, url: str, raw: bytes, retry_after: str | None,
                     secrets: Iterable[str] = ()) -> None:
    """The one status policy (:func:`~snapaudit.systems.failure.classify_status`): nothing
    for a success, TransportInvalid for a retryable status (the redacted body excerpt kept
    out of the ledger, in ``body``), NotFoundError for 404, BackendError for another 4xx."""
    if status < 400:
        return
    excerpt = body_excerpt(raw, secrets)
    reason = classify_status(status)
    if reason is not None:
        raise TransportInvalid(reason, body=excerpt, retry_after=parse_retry_after(retry_after))
    error = NotFoundError if status == 404 else BackendError
    raise error(f"{public_url(url)} refused the call (HTTP {status}, not retryable: check "
                f"the URL, the key and the request): {excerpt}")


class HttpClient:
    """The one outgoing HTTP client: an aiohttp session per event loop, bounded reads, the
    one status policy, timeouts and connection errors as TransportInvalid.

    ``concurrency`` caps the connector (0: the engine bounds concurrency); ``secrets`` are
    masked in every message this client builds (a :class:`~snapaudit.systems.redact.Secrets`
    is read at each message: a key added after the client was made is masked too)."""

    def __init__(self, *, timeout_s: float, max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
                 concurrency: int = 0, rate_limit_per_s: float | None = None,
                 secrets: Iterable[str] = ()):
        self.timeout = aiohttp.ClientTimeout(total=timeout_s)
        self.max_response_bytes = max_response_bytes
        self.secrets: Iterable[str] = secrets if isinstance(secrets, Secrets) else tuple(
            s for s in secrets if s)
        self.bucket = TokenBucket(rate_limit_per_s)
        self._concurrency = concurrency
        self._session: aiohttp.ClientSession | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def _get_session(self) -> aiohttp.ClientSession:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.closed or self._loop is not loop:
            connector = aiohttp.TCPConnector(limit=self._concurrency, limit_per_host=0)
            # Bodies are decompressed by read_body, under the response cap.
            self._session = aiohttp.ClientSession(connector=connector, timeout=self.timeout,
                                                  auto_decompress=False)
            self._loop = loop
        return self._session

    async def request(self, method: str, url: str, headers: dict[str, str],
                      write: Callable[[bytes], object], *, max_bytes: int | None = None,
                      timeout: aiohttp.ClientTimeout | None = None, **kw: Any) -> None:
        """One call; a success's body goes to ``write`` (at most ``max_bytes``, default
        ``max_response_bytes``), an error status raises (:func:`raise_for_status`)."""
        await self.bucket.acquire()
        session = self._get_session()
        try:
            async with session.request(method, url, headers={
                    **headers, "Accept-Encoding": ACCEPT_ENCODING},
                    timeout=timeout or self.timeout, **kw) as resp:
                if resp.status >= 400:
                    raw = await read_body(resp, self.max_response_bytes)
                    raise_for_status(resp.status, url, raw, resp.headers.get("Retry-After"),
                                     self.secrets)
                await copy_body(resp, max_bytes or self.max_response_bytes, write)
        except TimeoutError:  # a download has no total limit, only timeout_s between bytes
            raise TransportInvalid(R.TIMEOUT, detail=f"no response within "
                                   f"{self.timeout.total:g} s") from None
        except aiohttp.ClientError as exc:
            detail = redact(connection_detail(exc, url), self.secrets)
            raise TransportInvalid(R.CONNECTION, detail=detail) from None

    async def request_json(self, method: str, url: str, headers: dict[str, str],
                           **kw: Any) -> Any:
        """One call's decoded JSON body (``malformed_json`` when it is not usable JSON)."""
        parts: list[bytes] = []
        await self.request(method, url, headers, parts.append, **kw)
        raw = b"".join(parts)
        try:
            return parse_json(raw, R.MALFORMED_JSON)
        except TransportInvalid as exc:
            raise TransportInvalid(exc.reason, detail=f"{exc.detail}; "
                                   f"{body_excerpt(raw, self.secrets)}") from None

    async def aclose(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None
        self._loop = None


class HttpEndpoint(HttpClient):
    """One endpoint URL; the connector limit matches the concurrency."""

    def __init__(self, url: str, *, concurrency: int, timeout_s: float,
                 rate_limit_per_s: float | None = None,
                 max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
                 secrets: Iterable[str] = ()):
        super().__init__(timeout_s=timeout_s, max_response_bytes=max_response_bytes,
                         concurrency=concurrency, rate_limit_per_s=rate_limit_per_s,
                         secrets=secrets)
        self.url = url

    async def call_json(self, method: str, body: Any, headers: dict[str, str]) -> Any:
        """Send ``body`` as JSON (as query parameters for GET); the parsed JSON reply."""
        if method == "GET":
            return await self.request_json(method, self.url, headers,
                                           params={k: str(v) for k, v in body.items()})
        return await self.request_json(method, self.url, headers, json=body)


async def check_reachable(url: str, timeout_s: float = 5.0) -> None:
    """Open (and close) a TCP connection to ``url``'s host; ConfigError when that fails."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(f"endpoint {url!r} is not an http(s) URL")
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        _, writer = await asyncio.wait_for(
            asyncio.open_connection(parts.hostname, port), timeout=timeout_s
        )
    except (OSError, TimeoutError) as exc:
        raise ConfigError(f"endpoint {url} is unreachable: {exc or type(exc).__name__}") \
            from None
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
