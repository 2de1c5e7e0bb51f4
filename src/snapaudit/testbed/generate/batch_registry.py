"""The batch API of a generator config's backend, imported lazily."""

from __future__ import annotations

from snapaudit.registry import Registry
from snapaudit.testbed.generate.batch_api import BatchProvider
from snapaudit.testbed.generate.config import GeneratorConfig

BATCH_PROVIDERS: Registry[BatchProvider] = Registry("batch provider", {
    "openai": "snapaudit.testbed.generate.openai_batch:OpenAIBatch",
    "anthropic": "snapaudit.testbed.generate.anthropic_batch:AnthropicBatch",
})


def build_batch_provider(config: GeneratorConfig, max_requests: int | None = None,
                         max_bytes: int | None = None) -> BatchProvider | None:
    """The batch API of ``config``'s backend (None for a backend without one: local)."""
    if config.backend not in BATCH_PROVIDERS:
        return None
    return BATCH_PROVIDERS.build(config.backend, config, max_requests, max_bytes)
