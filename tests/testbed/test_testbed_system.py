"""The testbed system: prompt from locked evidence, one generator call, parsed answer."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from typing import Any

import pytest

from snapaudit.errors import TransportInvalid
from snapaudit.systems.base import AnswerCall, Evidence, RetrievingSystem
from snapaudit.systems.resources import RunResources
from snapaudit.testbed.generate.config import generator_config
from snapaudit.testbed.prompt import SYSTEM_PROMPT, prompt_spec
from snapaudit.testbed.system import TestbedSystem
from tests.fakes.llm_server import FakeLLMServer, LLMCall

EVIDENCE = Evidence(doc_ids=("d2", "d7"), rendered="[1] id: d2\nurl: (none)\nParis is big.")


class FakeEvidence:
    """Evidence per (question, state): n0 has none; records which pass was asked."""

    def __init__(self, pass_no: int, asked: list[tuple[int, str, str]]):
        self.pass_no = pass_no
        self.asked = asked

    async def evidence(self, question_id: str, question: str, state: str) -> Evidence | None:
        self.asked.append((self.pass_no, question_id, state))
        return None if state == "n0" else EVIDENCE

    def spec(self) -> dict[str, Any]:
        return {"retriever": "fake", "top_k": 2}

    async def aclose(self) -> None:
        return None


def echo_seed(call: LLMCall) -> str:
    return json.dumps({"answer": f"answer-{call.body.get('seed')}"})


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(responder=echo_seed) as srv:
        yield srv


def system(server: FakeLLMServer, state: str, asked: list[tuple[int, str, str]] | None = None,
           resources: RunResources | None = None, **fields: Any) -> TestbedSystem:
    config = generator_config(backend="openai", model="fake-model",
                             base_url=server.openai_base_url, **fields)
    log = asked if asked is not None else []
    return TestbedSystem(state, config, lambda p: FakeEvidence(p, log), resources)


def call(state: str, evidence: Evidence | None, seed: int = 99) -> AnswerCall:
    return AnswerCall("q1", "What is the capital of France?", state, 1, 1, seed, evidence)


def test_is_a_retrieving_system_and_uses_one_source_per_pass(server: FakeLLMServer) -> None:
    asked: list[tuple[int, str, str]] = []
    n1 = system(server, "n1", asked)
    assert isinstance(n1, RetrievingSystem)
    assert asyncio.run(n1.retrieve("q1", "Q?", 1)) == EVIDENCE
    assert asyncio.run(n1.retrieve("q1", "Q?", 2)) == EVIDENCE
    assert asyncio.run(system(server, "n0", asked).retrieve("q1", "Q?", 1)) is None
    assert asked == [(1, "q1", "n1"), (2, "q1", "n1"), (1, "q1", "n0")]


def test_answer_builds_the_prompt_from_the_locked_evidence(server: FakeLLMServer) -> None:
    async def go() -> None:
        n1, n0 = system(server, "n1"), system(server, "n0")
        try:
            out1 = await n1.answer(call("n1", EVIDENCE, seed=5))
            sent1 = server.calls[-1]
            out0 = await n0.answer(call("n0", None, seed=6))
            sent0 = server.calls[-1]
        finally:
            await n1.aclose()
            await n0.aclose()
        assert (out1.answer, out0.answer) == ("answer-5", "answer-6")
        assert out1.doc_ids == ("d2", "d7") and out0.doc_ids == ()
        assert out1.usage == {"prompt_tokens": 12, "completion_tokens": 5}
        assert out1.latency_s > 0
        assert out1.meta["model"] == "fake-model"
        assert out1.meta["left_to_provider"] == ["temperature", "top_p"]
        assert sent1.system == sent0.system == SYSTEM_PROMPT
        assert sent1.user == ("<evidence>\n" + EVIDENCE.rendered + "\n</evidence>\n\n"
                              "Question: What is the capital of France?")
        assert sent0.user == "Question: What is the capital of France?"

    asyncio.run(go())


def test_invalid_answers_raise_transport_invalid(server: FakeLLMServer) -> None:
    async def go() -> list[str]:
        n1 = system(server, "n1")
        reasons = []
        try:
            for fault in ("schema_violation", "oversized", "500"):
                server.inject(fault)
                with pytest.raises(TransportInvalid) as info:
                    await n1.answer(call("n1", EVIDENCE))
                reasons.append(info.value.reason)
        finally:
            await n1.aclose()
        return reasons

    assert asyncio.run(go()) == ["invalid_answer", "oversized_answer", "http_500"]


def test_states_share_one_generator_instance_until_their_run_ends(
        server: FakeLLMServer) -> None:
    async def go() -> None:
        run = RunResources()
        a, b = system(server, "n1", resources=run), system(server, "n3", resources=run)
        assert a.generator is b.generator
        other = system(server, "n7", resources=run, temperature=0.3)
        assert other.generator is not a.generator
        shared = a.generator
        await a.aclose()
        await b.answer(call("n3", EVIDENCE))  # still open for b
        await b.aclose()
        await other.aclose()
        assert system(server, "n1", resources=run).generator is shared  # the run still has it
        await run.aclose()  # the run ends: its generators are closed
        nxt = RunResources()
        c = system(server, "n1", resources=nxt)
        assert c.generator is not shared  # the next run builds its own
        alone = system(server, "n1")
        assert alone.generator is not c.generator  # no run's resources: one of its own
        await alone.aclose()
        await nxt.aclose()

    asyncio.run(go())


def test_spec_binds_generator_prompt_and_evidence(server: FakeLLMServer) -> None:
    async def go() -> dict[str, Any]:
        n1 = system(server, "n1")
        try:
            return n1.spec()
        finally:
            await n1.aclose()

    spec = asyncio.run(go())
    assert spec["state"] == "n1" and spec["kind"] == "testbed"
    assert spec["prompt"]["sha256"] == prompt_spec()["sha256"]
    assert spec["evidence"] == {"retriever": "fake", "top_k": 2}
    assert spec["generator"]["backend"] == "openai"
    assert spec["generator"]["model"] == "fake-model"
