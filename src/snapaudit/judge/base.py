"""The judge interface: one blind packet per question in, one label per pair out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol


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


class Judge(Protocol):
    name: str

    def spec(self) -> dict[str, Any]:
        """Model id, prompt hash and controls that shape labels."""
        ...

    async def judge(self, packet: JudgePacket, seed: int) -> dict[tuple[str, str], bool]:
        """A same/different decision for every pair of ``packet.pairs``; raise
        TransportInvalid for malformed or incomplete output."""
        ...

    async def aclose(self) -> None:
        ...


async def judge_with_usage(judge: Judge, packet: JudgePacket, seed: int
                           ) -> tuple[dict[tuple[str, str], bool], dict[str, int], dict[str, Any]]:
    """``judge.judge`` plus the tokens the call used and its metadata (the replica that
    served it, the model's finish reason) for judges that meter them (an LLM judge defines
    ``judge_metered``); others report neither."""
    metered = getattr(judge, "judge_metered", None)
    if metered is None:
        return await judge.judge(packet, seed), {}, {}
    verdict, usage, meta = await metered(packet, seed)
    return verdict, dict(usage), dict(meta)
