"""Sample size from a pilot: questions needed for a target power at a target excess churn D.

The gate's statistics are means of per-question values D_i, so with n questions D-hat is close
to normal with standard error sigma / sqrt(n), sigma the standard deviation of D_i (ddof 1)
measured in the pilot (at the pilot's repeats r; a run with other r has another sigma). For a
target true D (the same in both kernels) and power 1 - beta, each rule of the gate needs:

- ``K lcb95 > t`` (the one-sided 95% lower bound): n = ((z_0.95 + z_(1-beta)) sigma_K / (D - t))^2
- ``K d_hat >= t`` (the point estimate): n = (z_(1-beta) sigma_K / (D - t))^2

rounded up; a rule with D <= t never reaches a power above one half, whatever n (``None``).
The gate passes only if every rule passes, so the plan asks for the largest n of the rules;
the rules are strongly positively correlated, so the gate's power at that n is close to, and at
most, the lowest rule power. ``bench/calibration.py`` checks the plan by simulation
(docs/benchmarks.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from snapaudit.errors import ConfigError, InputError
from snapaudit.stats.gate import GateConfig, GateRule

LCB_ALPHA = 0.05  # the gate's lcb95 is the 5th percentile of the bootstrap


@dataclass(frozen=True)
class Pilot:
    """Per-kernel mean and standard deviation (ddof 1) of the pilot's D_i, in pp."""

    questions: int
    repeats: int
    d_hat_pp: Mapping[str, float]
    sd_pp: Mapping[str, float]
    source: str | None = None


def pilot_from_values(values: Mapping[str, np.ndarray], repeats: int,
                      source: str | None = None) -> Pilot:
    """A pilot from per-question D_i (fractions) of each kernel."""
    sizes = {len(v) for v in values.values()}
    if len(sizes) != 1 or min(sizes) < 2:
        raise InputError("a pilot needs the same number (>= 2) of per-question values "
                         "for every kernel")
    return Pilot(sizes.pop(), repeats,
                 {k: 100 * float(np.mean(v)) for k, v in values.items()},
                 {k: 100 * float(np.std(v, ddof=1)) for k, v in values.items()}, source)


@dataclass(frozen=True, slots=True)
class RuleNeed:
    rule: str
    questions: int | None
    note: str | None = None


@dataclass(frozen=True, slots=True)
class PlanRow:
    """Questions the gate needs at one target D: the largest need of its rules."""

    target_d_pp: float
    questions: int | None
    rules: tuple[RuleNeed, ...]


@dataclass(frozen=True)
class Plan:
    pilot: Pilot
    power: float
    rows: tuple[PlanRow, ...]

    def to_json(self) -> dict[str, object]:
        return {"pilot": {"questions": self.pilot.questions, "repeats": self.pilot.repeats,
                          "d_hat": dict(self.pilot.d_hat_pp), "sd": dict(self.pilot.sd_pp),
                          "source": self.pilot.source},
                "power": self.power,
                "rows": [{"target_d": r.target_d_pp, "questions": r.questions,
                          "rules": [{"rule": x.rule, "questions": x.questions, "note": x.note}
                                    for x in r.rules]} for r in self.rows]}


def rule_need(rule: GateRule, sd_pp: float | None, target_d_pp: float, power: float) -> RuleNeed:
    """Questions for one rule to pass with probability ``power`` at true D = ``target_d_pp``."""
    name = rule.describe()
    if sd_pp is None:
        return RuleNeed(name, None, f"the pilot has no {rule.kernel} values")
    gap = target_d_pp - rule.threshold
    if gap <= 0:
        return RuleNeed(name, None, f"target D {target_d_pp:g} is not above {rule.threshold:g}: "
                                    "power stays at or below 50% for any n")
    z = NormalDist().inv_cdf(power)
    if rule.statistic == "lcb95":
        z += NormalDist().inv_cdf(1 - LCB_ALPHA)
    return RuleNeed(name, max(1, math.ceil((z * sd_pp / gap) ** 2)))


def plan(pilot: Pilot, targets_pp: Sequence[float], power: float = 0.8,
         gate: GateConfig | None = None) -> Plan:
    """The questions needed for ``power`` at each target D (pp), rule by rule."""
    if not 0.5 < power < 1:
        raise ConfigError(f"power must be in (0.5, 1), got {power}")
    rules = (gate or GateConfig()).rules
    rows = []
    for d in targets_pp:
        needs = tuple(rule_need(r, pilot.sd_pp.get(r.kernel), d, power) for r in rules)
        counts = [x.questions for x in needs]
        total = None if any(c is None for c in counts) else max(c for c in counts if c)
        rows.append(PlanRow(float(d), total, needs))
    return Plan(pilot, power, tuple(rows))


def render_text(result: Plan) -> str:
    """The plain-text table ``snapaudit plan`` prints."""
    p = result.pilot
    lines = [f"pilot: {p.questions} questions, r = {p.repeats}"
             + (f" ({p.source})" if p.source else "")]
    for k in sorted(p.sd_pp):
        lines.append(f"  {k:<9} D = {p.d_hat_pp[k]:6.2f} pp   sd(D_i) = {p.sd_pp[k]:6.2f} pp")
    lines.append(f"questions needed for {100 * result.power:g}% power (normal approximation):")
    rules = [x.rule for x in result.rows[0].rules] if result.rows else []
    lines.append("  " + f"{'D (pp)':>7}  {'gate':>8}  " + "  ".join(f"{r:>22}" for r in rules))
    for row in result.rows:
        cells = "  ".join(f"{_n(x.questions):>22}" for x in row.rules)
        lines.append(f"  {row.target_d_pp:>7g}  {_n(row.questions):>8}  {cells}")
    notes = sorted({f"{x.rule}: {x.note}" for r in result.rows for x in r.rules if x.note})
    lines += [f"  - {n}" for n in notes]
    return "\n".join(lines) + "\n"


def _n(value: int | None) -> str:
    return "-" if value is None else f"{value:,}"
