"""The sections a run adds to its analysis in ``results.json``, as typed records.

- :class:`Usage` (``usage``): tokens and cost per ledger stage, metered from the attempts
  (computed by :mod:`snapaudit.run.analysis.usage`; not a claim);
- :class:`ProtocolWarning` (``warnings``): where the answers say the protocol is wrong
  (:mod:`snapaudit.run.analysis.warnings`);
- :class:`ReviewSummary` (``review``): the change review's standing decisions
  (:mod:`snapaudit.run.analysis.review`).

Each ``to_json`` writes the keys the schema documents (docs/results-schema.md) and each
``from_json`` reads them back into the same record.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from snapaudit.stats.codec import decode


@dataclass(frozen=True, slots=True)
class StageUsage:
    """The attempts of one ledger stage, the tokens its providers reported, and their cost."""

    attempts: int
    attempts_with_usage: int
    model: str | None
    prompt_tokens: int
    completion_tokens: int
    batched_prompt_tokens: int
    batched_completion_tokens: int
    cost_usd: float | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class UsageTotal:
    attempts: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Usage:
    """``usage``: every stage with attempts, and their total."""

    stages: Mapping[str, StageUsage]
    total: UsageTotal

    @classmethod
    def of(cls, stages: Mapping[str, StageUsage]) -> Usage:
        """The stages and their total (cost: the sum of the priced stages, None if none)."""
        costs = [s.cost_usd for s in stages.values() if s.cost_usd is not None]
        total = UsageTotal(sum(s.attempts for s in stages.values()),
                           sum(s.prompt_tokens for s in stages.values()),
                           sum(s.completion_tokens for s in stages.values()),
                           round(sum(costs), 6) if costs else None)
        return cls(dict(stages), total)

    def to_json(self) -> dict[str, Any]:
        return {"stages": {k: v.to_json() for k, v in self.stages.items()},
                "total": self.total.to_json()}


@dataclass(frozen=True, slots=True)
class ProtocolWarning:
    """One warning: a code a program can test and a message for people."""

    code: str
    message: str

    def to_json(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Regression:
    """A standing ``regression`` decision: the question, who decided, the note and when."""

    question_id: str
    annotator: str
    note: str
    at: str

    def to_json(self) -> dict[str, str]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class AnnotatorCounts:
    """One annotator's standing decisions by kind."""

    reviewed: int
    regressions: int
    improvements: int
    neutral: int
    unclear: int

    def to_json(self) -> dict[str, int]:
        return asdict(self)


@dataclass(frozen=True)
class ReviewSummary:
    """``review``: the change questions by their standing decisions
    (:mod:`snapaudit.run.analysis.review` says how a question's decision is made)."""

    reviewed: int
    changed: int
    regressions: int
    improvements: int
    neutral: int
    unclear: int
    by_annotator: Mapping[str, AnnotatorCounts] = field(default_factory=dict)
    regressions_list: tuple[Regression, ...] = ()
    decisions: int = 0  # the prefix of the decision chain the numbers stand on
    chain_sha256: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "by_annotator": {k: v.to_json() for k, v in
                                                 self.by_annotator.items()},
                "regressions_list": [r.to_json() for r in self.regressions_list]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReviewSummary:
        return decode(cls, data)
