"""Generator backends by name, imported lazily, and a small shared-instance cache.

``build_generator`` makes a new instance. ``acquire_generator`` / ``release_generator``
share one instance per generator config (one local model loaded once for all the
states of a run): the instance is closed when its last holder releases it.
"""

from __future__ import annotations

import threading

from snapaudit.registry import Entry, Registry
from snapaudit.testbed.generate.base import Generator
from snapaudit.testbed.generate.config import GeneratorConfig

GENERATORS: Registry[Generator] = Registry("generator backend", {
    "openai": "snapaudit.testbed.generate.openai:OpenAIGenerator",
    "anthropic": "snapaudit.testbed.generate.anthropic:AnthropicGenerator",
    "local": Entry("snapaudit.testbed.generate.local:LocalGenerator", extra="local"),
})


def build_generator(config: GeneratorConfig) -> Generator:
    """A new generator of ``config.backend``; its module is imported only now."""
    return GENERATORS.build(config.backend, config)


_lock = threading.Lock()
_shared: dict[str, tuple[Generator, int]] = {}


def _key(config: GeneratorConfig) -> str:
    return config.model_dump_json()


def acquire_generator(config: GeneratorConfig) -> Generator:
    """The shared instance for ``config`` (built on first use); pair with release."""
    key = _key(config)
    with _lock:
        generator, holders = _shared.get(key) or (build_generator(config), 0)
        _shared[key] = (generator, holders + 1)
        return generator


async def release_generator(config: GeneratorConfig) -> None:
    """Give back one hold; the last release closes the instance."""
    key = _key(config)
    with _lock:
        entry = _shared.get(key)
        if entry is None:
            return
        generator, holders = entry
        if holders > 1:
            _shared[key] = (generator, holders - 1)
            return
        del _shared[key]
    await generator.aclose()
