"""OpenAI-compatible chat completions over aiohttp.

Covers hosted APIs (OpenAI, DeepSeek, ...) and self-hosted servers (vLLM,
llama.cpp server, Ollama). Sampling controls are sent only when the protocol
sets them; the ones left to the provider are recorded in each attempt's meta.
"""

from __future__ import annotations

from typing import Any

from snapaudit.errors import BackendError, ConfigError, TransportInvalid
from snapaudit.systems.failure import R
from snapaudit.systems.replicas import ReplicaPool, call_replica
from snapaudit.systems.resources import RunResources
from snapaudit.testbed.generate._gbnf import MAX_STRING_CHARS
from snapaudit.testbed.generate._http import (
    JsonPoster,
    join_url,
    left_to_provider,
    public_url,
    read_api_key,
    usage_ints,
)
from snapaudit.testbed.generate.base import GenerationRequest, GenerationResult
from snapaudit.testbed.generate.config import OpenAIGeneratorConfig as GeneratorConfig

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_USAGE = {"prompt_tokens": "prompt_tokens", "completion_tokens": "completion_tokens"}


class OpenAIGenerator:
    """One OpenAI-compatible chat-completions endpoint."""

    name = "openai"


    def __init__(self, config: GeneratorConfig, resources: RunResources | None = None):
        self.config = config
        self._base = config.base_url or DEFAULT_BASE_URL
        # the run's pool of the base URL ([run] replicas), else one of its own
        self.pool = (resources.pool_for(self._base) if resources is not None
                     else ReplicaPool([self._base]))
        self._url = join_url(self._base, "/chat/completions")
        key = read_api_key(config.api_key_env, resources.secrets if resources else None)
        self._headers = {"Authorization": f"Bearer {key}"} if key else {}
        self._poster = JsonPoster(config.timeout_s, key)

    def spec(self) -> dict[str, Any]:
        c = self.config
        return {
            "backend": self.name,
            "model": c.model,
            "endpoint": public_url(self._url),
            "temperature": c.temperature,
            "top_p": c.top_p,
            "seed_per_call": c.seed_per_call,
            "max_tokens": c.max_tokens,
            "max_tokens_field": c.max_tokens_field,
            "reasoning_effort": c.reasoning_effort,
            "response_format": c.response_format,
        }

    def request_body(self, request: GenerationRequest) -> dict[str, Any]:
        """The JSON body of one call (public so tests and docs can show it)."""
        c = self.config
        body: dict[str, Any] = {
            "model": c.model,
            "messages": [
                {"role": "system", "content": request.system},
                {"role": "user", "content": request.user},
            ],
            c.max_tokens_field: request.max_tokens,
        }
        for name in ("temperature", "top_p", "reasoning_effort"):
            value = getattr(c, name)
            if value is not None:
                body[name] = value
        if c.seed_per_call:
            body["seed"] = request.seed
        body.update(structured_output(c.response_format, request.json_schema))
        return body

    async def generate(self, request: GenerationRequest) -> GenerationResult:
        body = self.request_body(request)
        try:
            replica, (payload, latency) = await call_replica(
                self.pool,
                lambda base: self._poster.post(join_url(base, "/chat/completions"),
                                               self._headers, body))
        except TransportInvalid as exc:
            hint = dialect_hint(exc.body or exc.detail)
            if not hint:
                raise
            raise TransportInvalid(exc.reason, detail=exc.detail, retry_after=exc.retry_after,
                                   body=_with_hint(exc.body, hint)) from None
        except BackendError as exc:
            hint = dialect_hint(str(exc))
            if not hint:
                raise
            raise type(exc)(f"{exc}{hint}") from None
        return self.parse(payload, latency, replica)

    def parse(self, payload: dict[str, Any], latency: float,
              replica: str | None = None) -> GenerationResult:
        """The result of one chat completion body (also a batch result's body)."""
        text, finish_reason = _message_text(payload)
        meta: dict[str, Any] = {
            "finish_reason": finish_reason,
            "left_to_provider": left_to_provider(self.config),
        }
        if replica:
            meta["replica"] = replica
        fingerprint = payload.get("system_fingerprint")
        if isinstance(fingerprint, str):
            meta["system_fingerprint"] = fingerprint
        model = payload.get("model")
        return GenerationResult(
            text=text,
            model=model if isinstance(model, str) and model else self.config.model,
            usage=usage_ints(payload.get("usage"), _USAGE),
            latency_s=latency,
            meta=meta,
        )

    async def aclose(self) -> None:
        await self._poster.aclose()


def dialect_hint(message: str) -> str:
    """What to try when a refusal names ``response_format`` (else ""); short, since a
    failing run quotes an error in 300 characters (snapaudit.run.execution.failures)."""
    if "response_format" not in message:
        return ""
    return ('; set generator.response_format = "json_object_schema" (llama-cpp-python\'s '
            'server) or "auto"')


def _with_hint(body: str, hint: str) -> str:
    """``hint`` right after the server's own words (before the body's size and hash), so a
    quote cut short still has both."""
    cut = body.find(" bytes, sha256 ")
    start = body.rfind("; ", 0, cut) if cut >= 0 else -1
    if start < 0:
        return f"{body}{hint}"
    return f"{body[:start]}{hint}{body[start:]}"


def structured_output(dialect: str, schema: dict[str, Any] | None) -> dict[str, Any]:
    """The body fields that ask a server for JSON in ``dialect`` (none for text/none);
    "auto" must have been resolved (snapaudit.run.dialect) before any call."""
    if dialect == "auto":
        raise ConfigError('response_format = "auto" is resolved by the run\'s preflight '
                          "probe; set a concrete dialect to call this generator directly")
    if dialect in ("none", "text") or schema is None:
        return {}
    if dialect == "json_object":
        return {"response_format": {"type": "json_object"}}
    if dialect == "json_object_schema":  # llama-cpp-python's server: it grammars maxLength
        return {"response_format": {"type": "json_object", "schema": capped_strings(schema)}}
    if dialect == "guided_json":  # vLLM's extra parameter
        return {"guided_json": schema}
    if dialect == "ollama_format":  # Ollama: the schema as "format"
        return {"format": schema}
    return {"response_format": {
        "type": "json_schema",
        "json_schema": {"name": "response", "strict": True, "schema": schema},
    }}


def capped_strings(schema: Any) -> Any:
    """``schema`` with every string lacking bounds given the in-process generator's caps
    (1 to :data:`~snapaudit.testbed.generate._gbnf.MAX_STRING_CHARS` characters): without
    them llama-cpp-python's schema grammar lets a small model write an endless string
    until ``max_tokens`` cuts the JSON off."""
    if isinstance(schema, list):
        return [capped_strings(v) for v in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: capped_strings(v) for k, v in schema.items()}
    if out.get("type") == "string" and "enum" not in out and "const" not in out:
        out.setdefault("minLength", 1)
        out.setdefault("maxLength", MAX_STRING_CHARS)
    return out


def _message_text(payload: dict[str, Any]) -> tuple[str, str | None]:
    """The assistant text and finish reason of the first choice; malformed_body otherwise."""
    choices = payload.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise TransportInvalid(R.MALFORMED_BODY, detail="no choices in the response")
    choice = choices[0]
    message = choice.get("message")
    if not isinstance(message, dict):
        raise TransportInvalid(R.MALFORMED_BODY, detail="choice has no message")
    content = message.get("content")
    if not isinstance(content, str):
        refusal = message.get("refusal")
        detail = f"refusal: {refusal}" if isinstance(refusal, str) else "message has no content"
        raise TransportInvalid(R.EMPTY_RESPONSE, detail=detail)
    finish = choice.get("finish_reason")
    return content, finish if isinstance(finish, str) else None
