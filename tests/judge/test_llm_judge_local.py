"""The LLM judge on the embedded model: two replicas with whole-prompt reuse give the verdicts
of one replica without it (packets judged at once, each twice with two seeds, as a retry).
The judge's own requests go through the generator directly, so that the replica and the
reuse of each call show even where the small model's verdict is invalid."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from snapaudit.errors import TransportInvalid
from snapaudit.judge.config import JudgeConfig
from snapaudit.judge.llm import LLMJudge
from snapaudit.judge.packets import build_packet, parse_verdict_text
from snapaudit.tables import AnswerRef
from snapaudit.testbed.generate.config import generator_config
from snapaudit.testbed.generate.local import LocalGenerator

pytestmark = [pytest.mark.local_llm, pytest.mark.slow]

QUESTIONS = {"q1": ("Which city is the capital of France?", ["Paris", "Lyon", "paris"]),
             "q2": ("Who wrote Hamlet?", ["Shakespeare", "William Shakespeare", "Marlowe"]),
             "q3": ("What is the largest planet?", ["Jupiter", "Saturn", "jupiter"])}
REFS = [AnswerRef("old", 1), AnswerRef("old", 2), AnswerRef("new", 1)]


async def verdicts(model: Path, **fields: int) -> list[tuple[str, object]]:
    config = generator_config(backend="local", model_path=str(model), temperature=1.0,
                              **fields)
    generator = LocalGenerator(config)
    judge = LLMJudge(JudgeConfig(kind="llm", name="smol", generator=config), generator)
    packets = [build_packet(qid, q, list(zip(REFS, texts, strict=True)), seed=5)[0]
               for qid, (q, texts) in QUESTIONS.items()]

    async def one(i: int) -> tuple[str, object]:
        packet = packets[i % len(packets)]
        result = await generator.generate(judge.request(packet, 100 + i))
        try:
            verdict: object = sorted(parse_verdict_text(packet, result.text).items())
        except TransportInvalid as exc:
            verdict = exc.reason
        return str(result.meta["kv_prompt_state"]), verdict

    try:
        return list(await asyncio.gather(*(one(i) for i in range(2 * len(packets)))))
    finally:
        await judge.aclose()


def test_replicas_and_reuse_leave_the_verdicts_unchanged(smollm2_path: Path) -> None:
    one = asyncio.run(verdicts(smollm2_path, replicas=1, prompt_cache_mb=0))
    two = asyncio.run(verdicts(smollm2_path, replicas=2))
    assert [v for _, v in two] == [v for _, v in one]
    assert {how for how, _ in one} == {"none"}
    assert [how for how, _ in two] == ["saved"] * 3 + ["loaded"] * 3  # a retry: decode only
