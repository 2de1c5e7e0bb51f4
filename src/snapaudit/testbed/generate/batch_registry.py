"""The batch API of a generator config's backend, imported lazily."""

from __future__ import annotations

from snapaudit.testbed.generate.batch_api import BatchProvider
from snapaudit.testbed.generate.config import GeneratorConfig


def build_batch_provider(config: GeneratorConfig, max_requests: int | None = None,
                         max_bytes: int | None = None) -> BatchProvider | None:
    """The batch API of ``config``'s backend (None for the local backend)."""
    if config.backend == "openai":
        from snapaudit.testbed.generate.openai_batch import OpenAIBatch

        return OpenAIBatch(config, max_requests, max_bytes)
    if config.backend == "anthropic":
        from snapaudit.testbed.generate.anthropic_batch import AnthropicBatch

        return AnthropicBatch(config, max_requests, max_bytes)
    return None
