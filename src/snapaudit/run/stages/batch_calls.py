"""The batch side of the answer and judge cells (``[run] mode = "batch"``): which cells can
go through a provider batch, how their request is built and how a result becomes a payload.

Only testbed answers and the packets of a judge kind that can batch (the LLM judge) whose
generator's backend has a batch API (the batch registry: ``openai``, ``anthropic``) can;
every other cell keeps ``batch = None`` and its stage runs
synchronously. The payload of a batch result is built by the same code as a synchronous
call's (``TestbedSystem.outcome``, :mod:`snapaudit.run.stages.payloads`, the judge's verdict
parser).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from snapaudit.errors import ConfigError, ProtocolError
from snapaudit.judge.base import JudgePacket
from snapaudit.judge.packets import parse_verdict_text
from snapaudit.judge.registry import judge_kind, kinds_that
from snapaudit.run.execution.runner import BatchCall, CellResult
from snapaudit.run.record.protocol import Protocol
from snapaudit.run.stages.payloads import answer_result
from snapaudit.systems.base import AnswerCall, System
from snapaudit.testbed.generate.base import GenerationRequest, GenerationResult
from snapaudit.testbed.generate.batch_api import PROVIDER_LIMITS, BatchProvider, limits
from snapaudit.testbed.generate.batch_registry import BATCH_PROVIDERS, build_batch_provider
from snapaudit.testbed.generate.config import GeneratorConfig


def check_batch_mode(protocol: Protocol) -> None:
    """ProtocolError when ``run.mode = "batch"`` but no stage has a batch-capable generator."""
    if protocol.run.mode != "batch":
        return
    gens = [protocol.generator if protocol.system.kind == "testbed" else None,
            protocol.judge.generator if judge_kind(protocol.judge.kind).batch else None]
    usable = [g for g in gens if g is not None and g.backend in BATCH_PROVIDERS]
    for g in usable:
        try:
            limits(*PROVIDER_LIMITS[g.backend], protocol.run.batch_max_requests,
                   protocol.run.batch_max_bytes)
        except ConfigError as exc:
            raise ProtocolError(f"{exc} ({g.backend})") from None
    if not usable:
        backends = " or ".join(BATCH_PROVIDERS.kinds())
        judges = " or ".join(repr(k) for k in kinds_that("batch"))
        raise ProtocolError(
            f'run.mode = "batch" needs an {backends} generator: [generator] of '
            f"system.kind = 'testbed' or [judge.generator] of judge.kind = {judges} (HTTP and "
            "Python systems, the local backend and the rule judge run synchronously)")


def billed_model(systems: Iterable[System]) -> str | None:
    """The model id the answers of ``systems`` are billed for: the testbed's generator when
    they share one (None: systems whose calls snapaudit does not price)."""
    from snapaudit.testbed.system import TestbedSystem

    models = {s.generator_config.model if isinstance(s, TestbedSystem) else None
              for s in systems}
    return models.pop() if len(models) == 1 else None


class BatchCalls:
    """Batch calls of one stage; one provider per generator config, closed by the driver."""

    def __init__(self, protocol: Protocol):
        self.run = protocol.run
        self._providers: dict[str, BatchProvider | None] = {}

    def provider(self, config: GeneratorConfig | None) -> BatchProvider | None:
        if self.run.mode != "batch" or config is None:
            return None
        key = config.model_dump_json()
        if key not in self._providers:
            self._providers[key] = build_batch_provider(
                config, self.run.batch_max_requests, self.run.batch_max_bytes)
        return self._providers[key]

    def answer(self, system: System, call: Callable[[int, int], AnswerCall], max_bytes: int
               ) -> BatchCall | None:
        """``call(attempt_no, seed)``: the answer call of one attempt."""
        from snapaudit.testbed.system import TestbedSystem

        if not isinstance(system, TestbedSystem):
            return None
        provider = self.provider(system.generator_config)
        if provider is None:
            return None

        def finish(result: GenerationResult, attempt: int, seed: int) -> CellResult:
            return answer_result(system.outcome(call(attempt, seed), result), max_bytes,
                                 latency=False)

        return BatchCall(provider, lambda a, s: system.request(call(a, s)), finish)

    def judge(self, judge: Any, packet: JudgePacket,
              payload_of: Callable[[dict[tuple[str, str], bool]], dict[str, Any]]
              ) -> BatchCall | None:
        from snapaudit.judge.llm import LLMJudge

        if not isinstance(judge, LLMJudge):
            return None
        provider = self.provider(judge.config.generator)
        if provider is None:
            return None

        def build(attempt: int, seed: int) -> GenerationRequest:
            return judge.request(packet, seed)

        def finish(result: GenerationResult, attempt: int, seed: int) -> CellResult:
            return CellResult(payload_of(parse_verdict_text(packet, result.text)),
                              dict(result.usage), None, {"model": result.model})

        return BatchCall(provider, build, finish)
