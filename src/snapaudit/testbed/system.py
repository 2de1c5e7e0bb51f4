"""The built-in single-turn retriever-generator as a system under audit.

A state is ``corpus prefix + retriever + renderer + prompt + generator``. Retrieval
(two independent cached passes for the retrieval lock) comes from
:class:`snapaudit.testbed.retrieval.evidence.EvidenceBuilder`; answering builds the one
prompt surface of :mod:`snapaudit.testbed.prompt` from the locked evidence, calls the
generator once and parses the answer. Given the run's resources, the generator instance is
shared by every state (and the judge) with the same generator config (one local model loaded
once per run) and closed with the run; without them the system has one of its own.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from snapaudit.systems.base import AnswerCall, AnswerOutcome, Evidence
from snapaudit.testbed.generate.base import GenerationRequest, GenerationResult, Generator
from snapaudit.testbed.generate.config import GeneratorConfig
from snapaudit.testbed.generate.registry import build_generator, shared_generator
from snapaudit.testbed.prompt import (
    ANSWER_SCHEMA,
    SYSTEM_PROMPT,
    parse_answer,
    parse_bare_answer,
    prompt_spec,
    user_message,
)

if TYPE_CHECKING:
    from snapaudit.systems.resources import RunResources
    from snapaudit.testbed.retrieval.config import TestbedConfig


class EvidenceSource(Protocol):
    """What the testbed needs from an evidence builder."""

    async def evidence(self, question_id: str, question: str, state: str) -> Evidence | None:
        ...

    def spec(self) -> dict[str, Any]: ...

    async def aclose(self) -> None: ...


class TestbedSystem:
    """One state of the testbed. ``sources(pass_no)`` gives the evidence of a retrieval pass."""

    __test__ = False  # not a pytest class, despite the name

    def __init__(self, state: str, generator_config: GeneratorConfig,
                 sources: Callable[[int], EvidenceSource],
                 resources: RunResources | None = None):
        self.state = state
        self.generator_config = generator_config
        self._resources = resources  # the run's: shared generator; None: one of its own
        self._sources = sources
        self._passes: dict[int, EvidenceSource] = {}
        self._generator: Generator | None = None

    @classmethod
    def from_config(cls, testbed: TestbedConfig, generator: GeneratorConfig, state: str,
                    run_dir: Path, resources: RunResources | None = None) -> TestbedSystem:
        return cls(state, generator, _builder_factory(testbed, Path(run_dir)), resources)

    # ------------------------------------------------------------ retrieval

    def _source(self, pass_no: int) -> EvidenceSource:
        if pass_no not in self._passes:
            self._passes[pass_no] = self._sources(pass_no)
        return self._passes[pass_no]

    async def retrieve(self, question_id: str, question: str, pass_no: int) -> Evidence | None:
        return await self._source(pass_no).evidence(question_id, question, self.state)

    # ------------------------------------------------------------ answering

    @property
    def generator(self) -> Generator:
        if self._generator is None:
            self._generator = (build_generator(self.generator_config) if self._resources is None
                               else shared_generator(self.generator_config, self._resources))
        return self._generator

    def request(self, call: AnswerCall) -> GenerationRequest:
        """The generation request of one attempt: same prompt surface in every state."""
        evidence = call.evidence.rendered if call.evidence is not None else None
        schema = (ANSWER_SCHEMA if self.generator_config.response_format not in ("none", "text")
                  else None)
        return GenerationRequest(
            system=SYSTEM_PROMPT,
            user=user_message(call.question, evidence),
            seed=call.seed,
            json_schema=schema,
            max_tokens=self.generator_config.max_tokens,
        )

    async def answer(self, call: AnswerCall) -> AnswerOutcome:
        return self.outcome(call, await self.generator.generate(self.request(call)))

    def outcome(self, call: AnswerCall, result: GenerationResult) -> AnswerOutcome:
        """The answer of one generation (a synchronous call's or a batch result's)."""
        answer = (parse_bare_answer(result.text)
                  if self.generator_config.response_format == "text"
                  else parse_answer(result.text))
        return AnswerOutcome(
            answer=answer,
            doc_ids=call.evidence.doc_ids if call.evidence is not None else (),
            usage=dict(result.usage),
            latency_s=result.latency_s,
            meta={"model": result.model, **result.meta},
        )

    def spec(self) -> dict[str, Any]:
        return {
            "kind": "testbed",
            "state": self.state,
            "generator": self.generator.spec(),
            "prompt": prompt_spec(),
            "evidence": self._source(1).spec(),
        }

    async def aclose(self) -> None:
        passes, self._passes = self._passes, {}
        for source in passes.values():
            await source.aclose()
        generator, self._generator = self._generator, None
        if generator is not None and self._resources is None:  # else the run closes it
            await generator.aclose()


def _builder_factory(testbed: TestbedConfig, run_dir: Path) -> Callable[[int], EvidenceSource]:
    def build(pass_no: int) -> EvidenceSource:
        from snapaudit.testbed.retrieval.evidence import EvidenceBuilder

        return EvidenceBuilder(testbed, cache_dir=run_dir / "retrieval" / f"pass{pass_no}")

    return build
