"""Protocol section for a generator backend (``[generator]``, and a judge's generator).

Owned by the generator backends. Fields that are None are *not sent* to the
provider; the fact that they were left to the provider is recorded.
"""

from __future__ import annotations

from typing import Literal

from snapaudit._model import Frozen


class GeneratorConfig(Frozen):
    backend: Literal["openai", "anthropic", "local"] = "local"
    model: str = "SmolLM2-135M-Instruct-Q4_1"
    base_url: str | None = None
    # Name of the environment variable holding the API key; the key itself never
    # appears in a protocol, a ledger, a log or a report.
    api_key_env: str | None = None
    temperature: float | None = None
    top_p: float | None = None
    seed_per_call: bool = True
    max_tokens: int = 128
    reasoning_effort: str | None = None
    response_format: Literal["json_schema", "json_object", "none"] = "json_schema"
    # local backend only
    n_threads: int = 1
    n_ctx: int = 4096
