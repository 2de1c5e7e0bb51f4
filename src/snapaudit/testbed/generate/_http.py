"""What the HTTP backends share: the API key, URLs, and the one client as they use it.

Calls go through :class:`snapaudit.systems.transport.HttpClient`, so a failure has the
reasons and the status policy of :mod:`snapaudit.systems.failure` (``http_429``,
``http_503``, ``timeout``, ``connection``, ``malformed_json``, ...; 401, 403, 404 and the
other fatal 4xx raise :class:`BackendError` and are not retried) and, when the server sent
one, ``retry_after`` in seconds. The API key is read from the environment only and
redacted from every message the client builds.
"""

from __future__ import annotations

import os
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from snapaudit.errors import BackendError, TransportInvalid
from snapaudit.systems.bounded import DEFAULT_MAX_RESPONSE_BYTES
from snapaudit.systems.failure import R
from snapaudit.systems.redact import Secrets
from snapaudit.systems.transport import HttpClient, public_url
from snapaudit.testbed.generate.config import GeneratorConfig

__all__ = ["JsonPoster", "join_url", "json_object", "left_to_provider", "public_url",
           "read_api_key", "usage_ints"]


def read_api_key(env_name: str | None, secrets: Secrets | None = None) -> str | None:
    """The key from the environment variable named in the protocol (None if none is named),
    added to ``secrets`` (the run's, when the backend is built with its resources)."""
    if env_name is None:
        return None
    key = os.environ.get(env_name, "")
    if not key:
        raise BackendError(f"environment variable {env_name} (api_key_env) is not set or empty")
    if secrets is not None:
        secrets.add(key)
    return key


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


class JsonPoster(HttpClient):
    """The one client (:class:`~snapaudit.systems.transport.HttpClient`) as the backends use
    it: POST JSON, a JSON object back; the engine bounds concurrency."""

    def __init__(self, timeout_s: float, secret: str | None,
                 max_bytes: int = DEFAULT_MAX_RESPONSE_BYTES):
        super().__init__(timeout_s=timeout_s, max_response_bytes=max_bytes,
                         secrets=(secret,) if secret else ())

    async def post(
        self, url: str, headers: dict[str, str], body: dict[str, Any]
    ) -> tuple[dict[str, Any], float]:
        """(decoded body, latency in seconds) of one call; TransportInvalid on failure."""
        start = time.perf_counter()
        value = await self.request_json("POST", url, headers, json=body)
        return json_object(value), time.perf_counter() - start


def json_object(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object; ``malformed_body`` otherwise."""
    if not isinstance(value, dict):
        raise TransportInvalid(R.MALFORMED_BODY, detail="response body is not a JSON object")
    return value


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
