"""The judge interface: one blind packet per question in, one label per pair out."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class JudgePacket:
    """What a judge sees: the question and anonymous answers (label -> text).

    ``labels`` are in presentation order; ``pairs`` are the unordered label
    pairs the judge must decide, each once. The mapping from label to
    (state, repeat) is kept by the engine and never shown to the judge.
    """

    question_id: str
    question: str
    labels: tuple[str, ...]
    answers: tuple[str, ...]
    pairs: tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class JudgeVerdict:
    """One judge call: a same/different label per pair, the tokens the call used (as the
    provider reported them; empty for a judge that uses none) and its metadata (the model,
    its finish reason, the replica that served it)."""

    labels: dict[tuple[str, str], bool]
    usage: Mapping[str, int] = field(default_factory=dict)
    meta: Mapping[str, Any] = field(default_factory=dict)


class Judge(ABC):
    """Every judge subclasses this; a judge that meters tokens overrides ``judge_metered``."""

    name: str
    model: str | None = None  # the model id its calls are billed for; None: unpriced

    @abstractmethod
    def spec(self) -> dict[str, Any]:
        """Model id, prompt hash and controls that shape labels."""

    @abstractmethod
    async def judge(self, packet: JudgePacket, seed: int) -> dict[tuple[str, str], bool]:
        """A same/different decision for every pair of ``packet.pairs``; raise
        TransportInvalid for malformed or incomplete output."""

    async def judge_metered(self, packet: JudgePacket, seed: int) -> JudgeVerdict:
        """``judge`` plus the call's usage and metadata; this default is for judges that use
        no tokens (no usage, no metadata)."""
        return JudgeVerdict(await self.judge(packet, seed))

    @abstractmethod
    async def aclose(self) -> None:
        """Release what the judge holds (a model, a shared generator)."""


async def judge_with_usage(judge: Judge, packet: JudgePacket, seed: int
                           ) -> tuple[dict[tuple[str, str], bool], dict[str, int], dict[str, Any]]:
    """``judge.judge_metered`` as a tuple: the labels, the tokens used and the metadata."""
    verdict = await judge.judge_metered(packet, seed)
    return verdict.labels, dict(verdict.usage), dict(verdict.meta)
