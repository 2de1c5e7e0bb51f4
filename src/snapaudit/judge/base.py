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
