"""Anthropic-compatible messages API over aiohttp.

Structured output goes through a tool: when the request carries a JSON schema
(and ``response_format`` is not ``none``) the call offers one tool whose input
schema is that schema and forces it with ``tool_choice``; the tool input is the
response, serialized as JSON text. Without a schema the text blocks are the
response. The messages API has no seed: ``seed`` is always recorded as left to
the provider.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from snapaudit.errors import ConfigError, TransportInvalid
from snapaudit.systems.failure import R
from snapaudit.testbed.generate._http import (
    JsonPoster,
    join_url,
    left_to_provider,
    public_url,
    read_api_key,
    usage_ints,
)
from snapaudit.testbed.generate.base import GenerationRequest, GenerationResult
from snapaudit.testbed.generate.config import AnthropicGeneratorConfig as GeneratorConfig

if TYPE_CHECKING:
    from snapaudit.systems.resources import RunResources

DEFAULT_BASE_URL = "https://api.anthropic.com"
TOOL_NAME = "respond"
_USAGE = {"input_tokens": "prompt_tokens", "output_tokens": "completion_tokens"}


class AnthropicGenerator:
    """One Anthropic-compatible messages endpoint."""

    name = "anthropic"

    def __init__(self, config: GeneratorConfig, resources: RunResources | None = None):
        # resources: the run's shared instances (this backend takes none of them)
        if config.reasoning_effort is not None:
            raise ConfigError(
                "reasoning_effort is not supported by the anthropic backend "
                "(extended thinking cannot be combined with a forced tool)"
            )
        self.config = config
        self._url = join_url(config.base_url or DEFAULT_BASE_URL, "/v1/messages")
        key = read_api_key(config.api_key_env, resources.secrets if resources else None)
        self._headers = {"anthropic-version": config.anthropic_version}
        if key:
            self._headers["x-api-key"] = key
        self._poster = JsonPoster(config.timeout_s, key)

    def spec(self) -> dict[str, Any]:
        c = self.config
        return {
            "backend": self.name,
            "model": c.model,
            "endpoint": public_url(self._url),
            "anthropic_version": c.anthropic_version,
            "temperature": c.temperature,
            "top_p": c.top_p,
            "max_tokens": c.max_tokens,
            "response_format": "tool" if c.response_format != "none" else "none",
        }

    def _uses_tool(self, request: GenerationRequest) -> bool:
        return self.config.response_format != "none" and request.json_schema is not None

    def request_body(self, request: GenerationRequest) -> dict[str, Any]:
        c = self.config
        body: dict[str, Any] = {
            "model": c.model,
            "max_tokens": request.max_tokens,
            "system": request.system,
            "messages": [{"role": "user", "content": request.user}],
        }
        for name in ("temperature", "top_p"):
            value = getattr(c, name)
            if value is not None:
                body[name] = value
        if self._uses_tool(request):
            body["tools"] = [{
                "name": TOOL_NAME,
                "description": "Submit the response.",
                "input_schema": request.json_schema,
            }]
            body["tool_choice"] = {"type": "tool", "name": TOOL_NAME}
        return body

    async def generate(self, request: GenerationRequest) -> GenerationResult:
        payload, latency = await self._poster.post(
            self._url, self._headers, self.request_body(request)
        )
        return self.parse(request, payload, latency)

    def parse(self, request: GenerationRequest, payload: dict[str, Any],
              latency: float) -> GenerationResult:
        """The result of one message body (also a batch result's message) for ``request``."""
        text = _tool_text(payload) if self._uses_tool(request) else _plain_text(payload)
        stop = payload.get("stop_reason")
        model = payload.get("model")
        return GenerationResult(
            text=text,
            model=model if isinstance(model, str) and model else self.config.model,
            usage=usage_ints(payload.get("usage"), _USAGE),
            latency_s=latency,
            meta={
                "finish_reason": stop if isinstance(stop, str) else None,
                "left_to_provider": left_to_provider(self.config, supports_seed=False),
            },
        )

    async def aclose(self) -> None:
        await self._poster.aclose()


def _blocks(payload: dict[str, Any]) -> list[dict[str, Any]]:
    content = payload.get("content")
    if not isinstance(content, list):
        raise TransportInvalid(R.MALFORMED_BODY, detail="no content list in the response")
    return [block for block in content if isinstance(block, dict)]


def _tool_text(payload: dict[str, Any]) -> str:
    for block in _blocks(payload):
        if block.get("type") == "tool_use" and block.get("name") == TOOL_NAME:
            arguments = block.get("input")
            if not isinstance(arguments, dict):
                raise TransportInvalid(R.MALFORMED_BODY, detail="tool input is not an object")
            return json.dumps(arguments, ensure_ascii=False)
    raise TransportInvalid(R.MALFORMED_BODY, detail=f"no {TOOL_NAME!r} tool_use block")


def _plain_text(payload: dict[str, Any]) -> str:
    texts = [block.get("text") for block in _blocks(payload) if block.get("type") == "text"]
    parts = [text for text in texts if isinstance(text, str)]
    if not parts:
        raise TransportInvalid(R.EMPTY_RESPONSE, detail="no text block in the response")
    return "".join(parts)
