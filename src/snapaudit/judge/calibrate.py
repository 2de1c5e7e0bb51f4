"""Measure a judge on labelled answer pairs: one two-answer packet per pair.

The labelled file is JSONL with ``question``, ``a``, ``b`` and ``same``
(tests/judge/data/answer_pairs.jsonl is the project's set). A packet the judge
cannot answer validly counts as a miss, and is also counted separately.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from snapaudit.errors import InputError, TransportInvalid
from snapaudit.judge.base import Judge
from snapaudit.judge.packets import build_packet
from snapaudit.tables import AnswerRef


@dataclass(frozen=True, slots=True)
class LabelledPair:
    question: str
    a: str
    b: str
    same: bool
    kind: str = ""


@dataclass(frozen=True, slots=True)
class Calibration:
    total: int
    hits: int
    invalid: int
    misses: tuple[LabelledPair, ...] = field(default=())

    @property
    def agreement(self) -> float:
        return self.hits / self.total if self.total else float("nan")


def read_pairs(path: str | Path) -> list[LabelledPair]:
    out: list[LabelledPair] = []
    for n, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            out.append(LabelledPair(str(obj["question"]), str(obj["a"]), str(obj["b"]),
                                    bool(obj["same"]), str(obj.get("kind", ""))))
        except (json.JSONDecodeError, KeyError, TypeError) as exc:
            raise InputError(f"not a labelled pair: {exc}", path=str(path), line=n) from None
    return out


async def calibrate(judge: Judge, pairs: Sequence[LabelledPair], seed: int = 0) -> Calibration:
    """The judge's agreement with the labels, one packet per pair, in file order."""
    hits = invalid = 0
    misses: list[LabelledPair] = []
    for i, pair in enumerate(pairs):
        answers = [(AnswerRef("x", 1), pair.a), (AnswerRef("x", 2), pair.b)]
        packet, _ = build_packet(f"pair-{i}", pair.question, answers, seed)
        try:
            verdict = await judge.judge(packet, seed + i)
        except TransportInvalid:
            invalid += 1
            misses.append(pair)
            continue
        if verdict[packet.pairs[0]] == pair.same:
            hits += 1
        else:
            misses.append(pair)
    return Calibration(len(pairs), hits, invalid, tuple(misses))
