"""Generator backends by name, imported lazily; one instance per generator config in a run.

``build_generator`` makes a new instance (an OpenAI-compatible one takes the pool of its base
URL from the run's resources). ``shared_generator`` is the run's one instance per
generator config (one local model loaded once for all the states and the judge of a run),
closed with the run's :class:`~snapaudit.systems.resources.RunResources`.
"""

from __future__ import annotations

from snapaudit.registry import Entry, Registry
from snapaudit.systems.resources import RunResources
from snapaudit.testbed.generate.base import Generator
from snapaudit.testbed.generate.config import GeneratorConfig

GENERATORS: Registry[Generator] = Registry("generator backend", {
    "openai": "snapaudit.testbed.generate.openai:OpenAIGenerator",
    "anthropic": "snapaudit.testbed.generate.anthropic:AnthropicGenerator",
    "local": Entry("snapaudit.testbed.generate.local:LocalGenerator", extra="local"),
})


def build_generator(config: GeneratorConfig, resources: RunResources | None = None
                    ) -> Generator:
    """A new generator of ``config.backend``; its module is imported only now. Every backend
    takes ``resources`` (the run's; an OpenAI-compatible one takes its base URL's pool)."""
    return GENERATORS.build(config.backend, config, resources)


def shared_generator(config: GeneratorConfig, resources: RunResources) -> Generator:
    """The run's instance for ``config`` (built on first use, closed with ``resources``)."""
    return resources.shared(f"generator:{config.model_dump_json()}",
                            lambda: build_generator(config, resources))
