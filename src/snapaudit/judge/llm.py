"""An LLM as a blind judge: any generator backend, the fixed prompt, a validated verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from snapaudit.errors import ConfigError
from snapaudit.judge import prompt_long
from snapaudit.judge.base import Judge, JudgePacket, JudgeVerdict
from snapaudit.judge.config import JudgeConfig
from snapaudit.judge.packets import Verdict, parse_verdict_text, verdict_schema
from snapaudit.judge.prompt import SYSTEM, prompt_spec, render_user
from snapaudit.testbed.generate.base import GenerationRequest, Generator

if TYPE_CHECKING:
    from snapaudit.systems.resources import RunResources


class LLMJudge(Judge):
    """Sends one packet per call to a generator and validates its JSON verdict.

    One attempt per call: a malformed, incomplete or non-JSON verdict raises
    ``TransportInvalid("schema")`` and the engine retries it.
    """

    def __init__(self, config: JudgeConfig, generator: Generator | None = None,
                 resources: RunResources | None = None) -> None:
        if config.generator is None:
            raise ConfigError("judge.kind = 'llm' needs a [judge.generator] table")
        self.name = config.name
        self.model = config.generator.model
        self._config = config
        self._owned = generator is not None or resources is None  # closed by this judge
        if generator is None:
            from snapaudit.testbed.generate.registry import build_generator, shared_generator

            # with the run's resources: shared with a testbed state of the same generator
            # config (one model load), closed with the run
            generator = (build_generator(config.generator) if resources is None
                         else shared_generator(config.generator, resources))
        self._generator = generator

    @property
    def config(self) -> JudgeConfig:
        return self._config

    @property
    def _long(self) -> bool:
        return self._config.prompt == "long"

    def spec(self) -> dict[str, Any]:
        return {
            "kind": "llm",
            "name": self.name,
            "prompt": prompt_long.prompt_spec() if self._long else prompt_spec(),
            "generator": self._generator.spec(),
            "tokens_per_pair": self._config.tokens_per_pair,
            "output_schema": "snapaudit/judge-verdict/v1",
        }

    def request(self, packet: JudgePacket, seed: int) -> GenerationRequest:
        """The exact request this judge sends for ``packet``."""
        return GenerationRequest(
            system=prompt_long.SYSTEM if self._long else SYSTEM,
            user=render_user(packet),
            seed=seed,
            json_schema=verdict_schema(packet),
            max_tokens=64 + self._config.tokens_per_pair * len(packet.pairs),
        )

    async def judge(self, packet: JudgePacket, seed: int) -> Verdict:
        return (await self.judge_metered(packet, seed)).labels

    async def judge_metered(self, packet: JudgePacket, seed: int) -> JudgeVerdict:
        """The verdict, the tokens the call used (as the provider reported them) and the
        call's metadata (model, finish reason, the replica that served it)."""
        result = await self._generator.generate(self.request(packet, seed))
        meta = {"model": result.model, **result.meta}
        return JudgeVerdict(parse_verdict_text(packet, result.text), dict(result.usage), meta)

    async def aclose(self) -> None:
        if self._owned:
            await self._generator.aclose()
