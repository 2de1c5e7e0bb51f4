"""Sample size from a pilot: questions needed for a target power at a target excess churn D.

The gate's statistics are means of per-question values D_i, so with n questions D-hat is close
to normal with standard error sigma / sqrt(n), sigma the standard deviation of D_i (ddof 1)
measured in the pilot (at the pilot's repeats r; a run with other r has another sigma). For a
target true D (the same in both kernels) and power 1 - beta, each rule of the gate needs:

- ``K lcb95 > t`` (the one-sided 95% lower bound): n = ((z_0.95 + z_(1-beta)) sigma_K / (D - t))^2
- ``K d_hat >= t`` (the point estimate): n = (z_(1-beta) sigma_K / (D - t))^2

rounded up; a rule with D <= t never reaches a power above one half, whatever n (``None``).
The minimum detectable effect (:func:`mde`) inverts this at a given n (and the pilot's r):
the smallest true D that each rule detects with that power, ``t + z sigma_K / sqrt(n)``.

Clustered questions (the pilot's answer rows carry ``cluster`` labels): the variance of D-hat
grows by Kish's design effect deff = 1 + (m_bar - 1) ICC (m_bar = sum m_g^2 / sum m_g, ICC the
one-way ANOVA intra-cluster correlation of the pilot's D_i per kernel), so every sigma_K above
is replaced by sigma_K sqrt(deff_K): n grows by deff, the MDE by sqrt(deff), assuming clusters
of the pilot's size distribution.
The gate passes only if every rule passes, so the plan asks for the largest n of the rules;
the rules are strongly positively correlated, so the gate's power at that n is close to, and at
most, the lowest rule power. ``bench/calibration.py`` checks the plan by simulation
(docs/benchmarks.md).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
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
    # clustered pilots: per-kernel ICC of D_i and design effect, the clusters and m_bar
    icc: Mapping[str, float] | None = None
    design_effect: Mapping[str, float] | None = None
    clusters: int | None = None
    mean_cluster_size: float | None = None
    # the per-question D_i themselves (fractions; the sequential plan resamples them) and
    # the pilot's states (answer calls per question = states x repeats), when known
    values: Mapping[str, np.ndarray] | None = field(default=None, repr=False, compare=False)
    states: int | None = None

    def deff(self, kernel: str) -> float:
        return (self.design_effect or {}).get(kernel, 1.0)


def pilot_from_values(values: Mapping[str, np.ndarray], repeats: int,
                      source: str | None = None, groups: np.ndarray | None = None,
                      states: int | None = None) -> Pilot:
    """A pilot from per-question D_i (fractions) of each kernel; ``groups`` (each question's
    cluster index) adds the ICC and design effect per kernel; ``states``: the pilot's."""
    sizes = {len(v) for v in values.values()}
    if len(sizes) != 1 or min(sizes) < 2:
        raise InputError("a pilot needs the same number (>= 2) of per-question values "
                         "for every kernel")
    pilot = Pilot(sizes.pop(), repeats,
                  {k: 100 * float(np.mean(v)) for k, v in values.items()},
                  {k: 100 * float(np.std(v, ddof=1)) for k, v in values.items()}, source,
                  values={k: np.asarray(v, dtype=np.float64) for k, v in values.items()},
                  states=states)
    if groups is None:
        return pilot
    from snapaudit.stats.cluster import design_effect, icc_anova

    counts = np.bincount(groups)
    icc = {k: icc_anova(v, groups) for k, v in values.items()}
    if any(math.isnan(x) for x in icc.values()):
        raise InputError("the design effect needs at least 2 clusters and a cluster with "
                         "more than one question")
    return replace(pilot, icc=icc, design_effect={k: design_effect(counts, x)
                                                  for k, x in icc.items()},
                   clusters=int(counts.size),
                   mean_cluster_size=float(np.sum(counts ** 2) / np.sum(counts)))


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
        return {"pilot": _pilot_json(self.pilot),
                "power": self.power,
                "rows": [{"target_d": r.target_d_pp, "questions": r.questions,
                          "rules": [{"rule": x.rule, "questions": x.questions, "note": x.note}
                                    for x in r.rules]} for r in self.rows]}


def _pilot_json(p: Pilot) -> dict[str, object]:
    return {"questions": p.questions, "repeats": p.repeats, "d_hat": dict(p.d_hat_pp),
            "sd": dict(p.sd_pp), "source": p.source,
            "icc": dict(p.icc) if p.icc is not None else None,
            "design_effect": dict(p.design_effect) if p.design_effect is not None else None,
            "clusters": p.clusters, "mean_cluster_size": p.mean_cluster_size}


def _z(rule: GateRule, power: float) -> float:
    z = NormalDist().inv_cdf(power)
    if rule.statistic == "lcb95":
        z += NormalDist().inv_cdf(1 - LCB_ALPHA)
    return z


def _sd(pilot: Pilot, kernel: str) -> float | None:
    """sigma_K inflated by the design effect (1 without clusters)."""
    sd = pilot.sd_pp.get(kernel)
    return None if sd is None else sd * math.sqrt(pilot.deff(kernel))


def rule_need(rule: GateRule, sd_pp: float | None, target_d_pp: float, power: float) -> RuleNeed:
    """Questions for one rule to pass with probability ``power`` at true D = ``target_d_pp``."""
    name = rule.describe()
    if sd_pp is None:
        return RuleNeed(name, None, f"the pilot has no {rule.kernel} values")
    gap = target_d_pp - rule.threshold
    if gap <= 0:
        return RuleNeed(name, None, f"target D {target_d_pp:g} is not above {rule.threshold:g}: "
                                    "power stays at or below 50% for any n")
    return RuleNeed(name, max(1, math.ceil((_z(rule, power) * sd_pp / gap) ** 2)))


def plan(pilot: Pilot, targets_pp: Sequence[float], power: float = 0.8,
         gate: GateConfig | None = None) -> Plan:
    """The questions needed for ``power`` at each target D (pp), rule by rule."""
    if not 0.5 < power < 1:
        raise ConfigError(f"power must be in (0.5, 1), got {power}")
    rules = (gate or GateConfig()).active_rules()
    rows = []
    for d in targets_pp:
        needs = tuple(rule_need(r, _sd(pilot, r.kernel), d, power) for r in rules)
        counts = [x.questions for x in needs]
        total = None if any(c is None for c in counts) else max(c for c in counts if c)
        rows.append(PlanRow(float(d), total, needs))
    return Plan(pilot, power, tuple(rows))


def render_text(result: Plan) -> str:
    """The plain-text table ``snapaudit plan`` prints."""
    p = result.pilot
    lines = [f"pilot: {p.questions} questions, r = {p.repeats}"
             + (f" ({p.source})" if p.source else "")]
    if p.design_effect is not None and p.icc is not None:
        lines.append(f"  clusters: {p.clusters} (m_bar = {p.mean_cluster_size:.2f}); design "
                     "effect " + ", ".join(f"{k} {p.design_effect[k]:.2f} (ICC {p.icc[k]:.3f})"
                                           for k in sorted(p.design_effect))
                     + "; questions below include it")
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


@dataclass(frozen=True, slots=True)
class MdeRow:
    """The smallest true D (pp) detected with the plan's power at ``questions``: per rule, and
    for the gate (the largest over its rules; None when a rule's kernel has no pilot values)."""

    questions: int
    mde_pp: float | None
    rules: tuple[tuple[str, float | None], ...]


def mde(pilot: Pilot, questions: Sequence[int], power: float = 0.8,
        gate: GateConfig | None = None) -> tuple[MdeRow, ...]:
    """Minimum detectable effect at each n (at the pilot's repeats r): t + z sigma_K / sqrt(n)."""
    if not 0.5 < power < 1:
        raise ConfigError(f"power must be in (0.5, 1), got {power}")
    if any(n < 1 for n in questions):
        raise ConfigError("question counts must be >= 1")
    out = []
    for n in questions:
        rules = []
        for rule in (gate or GateConfig()).active_rules():
            sd = _sd(pilot, rule.kernel)
            rules.append((rule.describe(), None if sd is None
                          else rule.threshold + _z(rule, power) * sd / math.sqrt(n)))
        values = [v for _, v in rules]
        worst = None if any(v is None for v in values) else max(v for v in values if v is not None)
        out.append(MdeRow(int(n), worst, tuple(rules)))
    return tuple(out)


def mde_json(rows: Sequence[MdeRow]) -> list[dict[str, object]]:
    return [{"questions": r.questions, "mde": r.mde_pp,
             "rules": [{"rule": k, "mde": v} for k, v in r.rules]} for r in rows]


def render_mde(pilot: Pilot, rows: Sequence[MdeRow], power: float) -> str:
    """The plain-text MDE table ``snapaudit plan --questions`` prints."""
    lines = [f"minimum detectable D (pp) for {100 * power:g}% power at r = {pilot.repeats} "
             "(normal approximation):"]
    names = [k for k, _ in rows[0].rules] if rows else []
    lines.append("  " + f"{'n':>9}  {'gate':>8}  " + "  ".join(f"{k:>22}" for k in names))
    for row in rows:
        cells = "  ".join(f"{_d(v):>22}" for _, v in row.rules)
        lines.append(f"  {row.questions:>9,}  {_d(row.mde_pp):>8}  {cells}")
    return "\n".join(lines) + "\n"


def _d(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"
