"""Generator backends by name, imported lazily; one instance per generator config in a run.

``build_generator`` makes a new instance (an OpenAI-compatible one takes the pool of its base
URL from the run's resources). ``shared_generator`` is the run's one instance per
generator config (one local model loaded once for all the states and the judge of a run),
closed with the run's :class:`~snapaudit.systems.resources.RunResources`.
"""

from __future__ import annotations

import importlib

from snapaudit.errors import ConfigError
from snapaudit.systems.resources import RunResources
from snapaudit.testbed.generate.base import Generator
from snapaudit.testbed.generate.config import GeneratorConfig

BACKENDS: dict[str, str] = {
    "openai": "snapaudit.testbed.generate.openai:OpenAIGenerator",
    "anthropic": "snapaudit.testbed.generate.anthropic:AnthropicGenerator",
    "local": "snapaudit.testbed.generate.local:LocalGenerator",
}


def build_generator(config: GeneratorConfig, resources: RunResources | None = None
                    ) -> Generator:
    """A new generator of ``config.backend``; its module is imported only now."""
    try:
        target = BACKENDS[config.backend]
    except KeyError:
        raise ConfigError(f"unknown generator backend {config.backend!r}") from None
    module_name, _, class_name = target.partition(":")
    backend: type[Generator] = getattr(importlib.import_module(module_name), class_name)
    if resources is not None and getattr(backend, "uses_replicas", False):
        return backend(config, resources)  # type: ignore[call-arg]
    return backend(config)  # type: ignore[call-arg]


def shared_generator(config: GeneratorConfig, resources: RunResources) -> Generator:
    """The run's instance for ``config`` (built on first use, closed with ``resources``)."""
    return resources.shared(f"generator:{config.model_dump_json()}",
                            lambda: build_generator(config, resources))
