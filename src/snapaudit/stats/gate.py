"""The intersection-union release gate: every rule must pass, or the gate fails.

The gate is confirmatory for *excess churn*: it passes when the data establish that the new
snapshot moves answers beyond same-snapshot repeat noise, i.e. the snapshots are
**incompatible**. A failed gate means excess churn was not shown (which is not proof of
compatibility). ``GateResult.verdict`` spells this out for machines and people.

The default is the rule preregistered in the reference study: exact D >= 3 pp AND exact
one-sided 95% lower bound > 0 AND semantic lower bound > 0. A rule whose kernel was not
computed (no pair labels) fails and says why; no secondary result can pass a failed gate.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import Field

from snapaudit._model import Frozen

Kernel = Literal["exact", "semantic"]
Statistic = Literal["d_hat", "lcb95"]
Op = Literal[">=", ">"]
_OPS = {">=": operator.ge, ">": operator.gt}


class GateRule(Frozen):
    """One inequality on one kernel's statistic, e.g. ``exact lcb95 > 0``."""

    kernel: Kernel
    statistic: Statistic
    op: Op
    threshold: float

    def describe(self) -> str:
        return f"{self.kernel} {self.statistic} {self.op} {self.threshold:g}"


def default_rules() -> tuple[GateRule, ...]:
    return (
        GateRule(kernel="exact", statistic="d_hat", op=">=", threshold=3.0),
        GateRule(kernel="exact", statistic="lcb95", op=">", threshold=0.0),
        GateRule(kernel="semantic", statistic="lcb95", op=">", threshold=0.0),
    )


class GateConfig(Frozen):
    """The rules of the gate, all of which must hold (intersection-union test)."""

    rules: tuple[GateRule, ...] = Field(default_factory=default_rules, min_length=1)


@dataclass(frozen=True, slots=True)
class RuleOutcome:
    rule: str
    kernel: str
    statistic: str
    op: str
    threshold: float
    value: float | None
    passed: bool
    note: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"rule": self.rule, "kernel": self.kernel, "statistic": self.statistic,
                "op": self.op, "threshold": self.threshold, "value": self.value,
                "passed": self.passed, "note": self.note}


INCOMPATIBLE = "incompatible"
NOT_SHOWN = "excess_churn_not_shown"


@dataclass(frozen=True, slots=True)
class GateResult:
    passed: bool
    rules: tuple[RuleOutcome, ...]

    @property
    def verdict(self) -> str:
        """``incompatible`` when the gate passed (excess churn established)."""
        return INCOMPATIBLE if self.passed else NOT_SHOWN

    def to_json(self) -> dict[str, object]:
        return {"passed": self.passed, "verdict": self.verdict,
                "rules": [r.to_json() for r in self.rules]}


def evaluate(config: GateConfig, stats: Mapping[str, Mapping[str, float]]) -> GateResult:
    """Apply every rule to ``stats[kernel][statistic]`` (D and lcb95 in pp)."""
    outcomes: list[RuleOutcome] = []
    for rule in config.rules:
        value = stats.get(rule.kernel, {}).get(rule.statistic)
        note = None
        if value is None:
            passed = False
            note = (f"{rule.kernel} kernel not computed"
                    + (" (no pair labels given)" if rule.kernel == "semantic" else ""))
        else:
            passed = bool(_OPS[rule.op](value, rule.threshold))
        outcomes.append(RuleOutcome(rule.describe(), rule.kernel, rule.statistic, rule.op,
                                    rule.threshold, value, passed, note))
    return GateResult(all(o.passed for o in outcomes), tuple(outcomes))
