"""Human pair labels (``same`` / ``different`` / ``unsure``) as judges ``human:NAME``.

A :class:`HumanLabel` is one person's decision on one pair of answers of a question. For the
statistics (:mod:`snapaudit.stats.human_agreement`) an ``unsure`` label is no decision: it is
left out of every comparison and counted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from snapaudit.tables import AnswerRef, PairLabel

Label = Literal["same", "different", "unsure"]
LABELS: tuple[Label, ...] = ("same", "different", "unsure")
HUMAN_PREFIX = "human:"


def human_judge(annotator: str) -> str:
    """The judge name of an annotator's labels: ``human:<annotator>``."""
    return f"{HUMAN_PREFIX}{annotator}"


@dataclass(frozen=True, slots=True)
class HumanLabel:
    """One annotator's label of the pair ``a < b`` of question ``question_id``."""

    question_id: str
    a: AnswerRef
    b: AnswerRef
    label: Label
    judge: str

    def decided(self) -> PairLabel | None:
        """The label as a pair label of judge ``judge``; None when ``unsure``."""
        if self.label == "unsure":
            return None
        return PairLabel(self.question_id, self.a, self.b, self.label == "same", self.judge)


def decided(labels: Sequence[HumanLabel]) -> list[PairLabel]:
    """The ``same``/``different`` labels as pair labels (``unsure`` left out)."""
    return [p for p in (lab.decided() for lab in labels) if p is not None]
