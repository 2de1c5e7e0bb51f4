"""Whole-prompt state reuse on the real SmolLM2 model: a repeat restored from its saved prompt
state draws exactly what a fresh prefill of that prompt draws (temperature 1.0, where a
changed logit shows), on the demo's prompts and on real ones, in any order."""

from __future__ import annotations

import asyncio
import json
import random
from pathlib import Path

import pytest

from snapaudit.demo.world import build_world
from snapaudit.testbed.generate.base import GenerationRequest, GenerationResult
from snapaudit.testbed.generate.config import generator_config
from snapaudit.testbed.generate.local import LocalGenerator
from snapaudit.testbed.prompt import ANSWER_SCHEMA, SYSTEM_PROMPT, user_message
from snapaudit.testbed.render import render_evidence
from snapaudit.testbed.retrieval.base import Document
from snapaudit.testbed.retrieval.config import RenderConfig

pytestmark = [pytest.mark.local_llm, pytest.mark.slow]

SEEDS = (11, 12)  # the first call of a prompt saves its state, the second restores it


def demo_users() -> list[str]:
    world = build_world(5, 7)
    docs = [Document(d["id"], d["url"], d["text"]) for d in world.docs]
    rng = random.Random(7)
    users = [user_message(world.questions[0]["question"], None)]
    for q in world.questions[1:3]:
        users.append(user_message(q["question"],
                                  render_evidence(rng.sample(docs, 3), RenderConfig())))
    return users


def real_users(data: Path) -> list[str]:
    """NQ-open questions with DPR Wikipedia passages as evidence (600 characters each)."""
    with open(data / "nq_open" / "NQ-open.dev.jsonl", encoding="utf-8") as f:
        questions = [json.loads(next(f))["question"] for _ in range(2)]
    with open(data / "wikipedia" / "dpr_wiki_passages_1000.jsonl", encoding="utf-8") as f:
        passages = [json.loads(next(f)) for _ in range(4)]
    docs = [Document(f"w{p['id']}", f"https://en.wikipedia.org/?curid={p['id']}",
                     p["contents"]) for p in passages]
    return [user_message(q, render_evidence(docs[2 * i: 2 * i + 2], RenderConfig(max_chars=600)))
            for i, q in enumerate(questions)]


def request(user: str, seed: int) -> GenerationRequest:
    return GenerationRequest(SYSTEM_PROMPT, user, seed, ANSWER_SCHEMA, 48)


def config(model: Path, **fields: int) -> LocalGenerator:
    return LocalGenerator(generator_config(backend="local", model_path=str(model),
                                           temperature=1.0, **fields))


async def in_order(generator: LocalGenerator, calls: list[tuple[str, int]]
                   ) -> list[GenerationResult]:
    try:
        return [await generator.generate(request(user, seed)) for user, seed in calls]
    finally:
        await generator.aclose()


def fresh_prefill(model: Path, user: str, seed: int) -> str:
    """The answer of a new instance that keeps no prompt state (its one call prefills)."""
    result = asyncio.run(in_order(config(model, replicas=1, prompt_cache_mb=0), [(user, seed)]))
    assert result[0].meta["kv_prompt_state"] == "none"
    return result[0].text


def check_reuse(model: Path, users: list[str]) -> None:
    calls = [(user, seed) for user in users for seed in SEEDS]
    reused = asyncio.run(in_order(config(model, replicas=1), calls))
    assert [r.meta["kv_prompt_state"] for r in reused] == ["saved", "loaded"] * len(users)
    fresh = {call: fresh_prefill(model, *call) for call in calls}
    for call, result in zip(calls, reused, strict=True):
        assert result.text == fresh[call], call
    # a shuffled order on a warm instance: repeats first, prompts interleaved
    shuffled = list(reversed(calls))
    random.Random(3).shuffle(shuffled)
    again = asyncio.run(in_order(config(model, replicas=1), shuffled))
    assert {c: r.text for c, r in zip(shuffled, again, strict=True)} == fresh
    assert "loaded" in {r.meta["kv_prompt_state"] for r in again}


def test_repeats_of_the_demos_prompts_draw_what_a_fresh_prefill_draws(
        smollm2_path: Path) -> None:
    check_reuse(smollm2_path, demo_users())


def test_repeats_of_real_prompts_draw_what_a_fresh_prefill_draws(
        smollm2_path: Path, shared_data: Path) -> None:
    check_reuse(smollm2_path, real_users(shared_data))


def test_two_replicas_answer_concurrent_calls_as_one_does(smollm2_path: Path) -> None:
    users = demo_users()
    calls = [(user, seed) for seed in SEEDS for user in users]

    async def together(generator: LocalGenerator) -> list[GenerationResult]:
        try:
            return list(await asyncio.gather(*(generator.generate(request(u, s))
                                               for u, s in calls)))
        finally:
            await generator.aclose()

    one = asyncio.run(together(config(smollm2_path, replicas=1, prompt_cache_mb=0)))
    two = asyncio.run(together(config(smollm2_path, replicas=2)))
    assert [r.text for r in two] == [r.text for r in one]
    assert {r.meta["replica"] for r in two} == {0, 1}
    by_prompt: dict[str, set[int]] = {}
    for (user, _), result in zip(calls, two, strict=True):
        by_prompt.setdefault(user, set()).add(result.meta["replica"])
    assert all(len(replicas) == 1 for replicas in by_prompt.values())  # repeats stay put
