"""Shared helpers: one generator call against the fake server, in a fresh event loop."""

from __future__ import annotations

import asyncio
from typing import Any

from snapaudit.testbed.generate.base import GenerationRequest, GenerationResult
from snapaudit.testbed.generate.config import GeneratorConfig, generator_config
from snapaudit.testbed.generate.registry import build_generator
from snapaudit.testbed.prompt import ANSWER_SCHEMA, SYSTEM_PROMPT, user_message
from tests.fakes.llm_server import FakeLLMServer

REQUEST = GenerationRequest(
    system=SYSTEM_PROMPT,
    user=user_message("What is the capital of France?", None),
    seed=1234,
    json_schema=ANSWER_SCHEMA,
    max_tokens=64,
)


def config_for(server: FakeLLMServer, backend: str, **fields: Any) -> GeneratorConfig:
    base = server.openai_base_url if backend == "openai" else server.anthropic_base_url
    return generator_config(backend=backend, model="fake-model",  # type: ignore[arg-type]
                           base_url=base, **fields)


async def _call(config: GeneratorConfig, request: GenerationRequest) -> GenerationResult:
    generator = build_generator(config)
    try:
        return await generator.generate(request)
    finally:
        await generator.aclose()


def call(config: GeneratorConfig, request: GenerationRequest = REQUEST) -> GenerationResult:
    return asyncio.run(_call(config, request))
