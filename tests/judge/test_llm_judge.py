"""The LLM judge against a loopback OpenAI-compatible fake that follows a planted partition."""

from __future__ import annotations

import asyncio

import pytest

from snapaudit.errors import ConfigError, TransportInvalid
from snapaudit.judge.config import JudgeConfig
from snapaudit.judge.llm import LLMJudge
from snapaudit.judge.packets import build_packet
from snapaudit.judge.prompt import SYSTEM
from snapaudit.tables import AnswerRef
from snapaudit.testbed.generate.config import generator_config
from snapaudit.testbed.generate.openai import OpenAIGenerator
from tests.fakes.judge_server import FAULTS, FakeJudgeServer, first_word

TEXTS = ["Paris", "paris, France", "Lyon", "Paris.", "Lyon city", "Nice", "Nice", "Paris"]
REFS = [AnswerRef(s, r) for s in ("old_x", "a_x", "b_x", "new_x") for r in (1, 2)]


def _judge(url: str) -> LLMJudge:
    gen = generator_config(backend="openai", base_url=url, model="fake-judge",
                          temperature=0.0)
    config = JudgeConfig(kind="llm", name="fake", generator=gen)
    return LLMJudge(config, generator=OpenAIGenerator(gen))


async def _run(faults: list[str]) -> tuple[list[object], FakeJudgeServer]:
    packet, _ = build_packet("q1", "Which city?", list(zip(REFS, TEXTS, strict=True)), seed=9)
    outcomes: list[object] = []
    async with FakeJudgeServer(first_word, faults) as server:
        judge = _judge(server.url)
        try:
            for _ in range(len(faults) + 1):
                try:
                    outcomes.append(await judge.judge(packet, seed=9))
                except TransportInvalid as exc:
                    outcomes.append(exc)
        finally:
            await judge.aclose()
    return outcomes, server


def test_follows_the_planted_partition() -> None:
    outcomes, server = asyncio.run(_run([]))
    verdict = outcomes[0]
    assert isinstance(verdict, dict) and len(verdict) == 28
    packet, _ = build_packet("q1", "Which city?", list(zip(REFS, TEXTS, strict=True)),
                                   seed=9)
    text = dict(zip(packet.labels, packet.answers, strict=True))
    for (a, b), same in verdict.items():
        assert same == (first_word(text[a]) == first_word(text[b]))
    assert sum(verdict.values()) == 6 + 1 + 1  # four "paris" answers, two "lyon", two "nice"
    body = server.requests[0]
    assert body["messages"][0]["content"] == SYSTEM
    sent = body["messages"][1]["content"]
    assert "old_x" not in sent and "new_x" not in sent and "q1" not in sent
    assert body["response_format"]["type"] == "json_schema"
    assert body["max_tokens"] == 64 + 24 * 28


@pytest.mark.parametrize("fault", FAULTS)
def test_each_malformed_output_is_transport_invalid_then_retry_succeeds(fault: str) -> None:
    outcomes, _ = asyncio.run(_run([fault]))
    assert isinstance(outcomes[0], TransportInvalid) and outcomes[0].reason == "schema"
    assert isinstance(outcomes[1], dict) and len(outcomes[1]) == 28


def test_a_fenced_verdict_is_accepted() -> None:
    outcomes, _ = asyncio.run(_run(["fence"]))
    assert isinstance(outcomes[0], dict) and outcomes[0] == outcomes[1]


def test_spec_binds_model_prompt_and_controls() -> None:
    judge = _judge("http://127.0.0.1:9/v1")
    spec = judge.spec()
    asyncio.run(judge.aclose())
    assert spec["kind"] == "llm" and spec["generator"]["model"] == "fake-judge"
    assert spec["generator"]["temperature"] == 0.0
    assert len(spec["prompt"]["sha256"]) == 64


def test_llm_judge_needs_a_generator() -> None:
    with pytest.raises(ConfigError):
        LLMJudge(JudgeConfig(kind="llm"))


def test_registry_builds_the_llm_judge_on_any_generator_backend() -> None:
    from snapaudit.judge.registry import build_judge

    async def go() -> dict[tuple[str, str], bool]:
        packet, _ = build_packet("q1", "Which city?", list(zip(REFS, TEXTS, strict=True)),
                                 seed=9)
        async with FakeJudgeServer(first_word) as server:
            gen = generator_config(backend="openai", base_url=server.url, model="m")
            judge = build_judge(JudgeConfig(kind="llm", name="reg", generator=gen))
            try:
                assert judge.name == "reg" and judge.spec()["generator"]["model"] == "m"
                return await judge.judge(packet, seed=1)
            finally:
                await judge.aclose()

    verdict = asyncio.run(go())
    assert len(verdict) == 28 and sum(verdict.values()) == 8
