"""The intersection-union release gate: every rule must pass, or the gate fails.

The gate is confirmatory for *excess churn*: it passes when the data establish that the new
snapshot moves answers beyond same-snapshot repeat noise, i.e. the snapshots are
**incompatible**. A failed gate means excess churn was not shown (which is not proof of
compatibility). ``GateResult.verdict`` spells this out for machines and people.

Rules come from a named profile (``[gate] profile``) or an explicit ``rules`` list:

- ``study`` (the rule preregistered in the reference study): exact D >= ``min_d_pp`` AND exact
  one-sided 95% lower bound > 0 AND semantic lower bound > 0;
- ``long-form``: semantic D >= ``min_d_pp`` AND semantic lower bound > 0 (long answers: the
  exact kernel is a diagnostic only);
- ``exact-only``: exact D >= ``min_d_pp`` AND exact lower bound > 0 (short answers, no judge).

A rule whose kernel was not computed cannot be evaluated: the gate does not pass and its
verdict is ``not_evaluable`` with the reason, never "not shown". No secondary result can pass
a failed gate.

With a **margin** (``[gate] margin_pp = M``) the gate can also pass the other way: the new
snapshot is **compatible** when, for every kernel the rules name, the one-sided 95% upper
bound of D is below M ("answers move less than M pp beyond repeat noise"; again an
intersection-union test, each kernel at 5%). The verdict is then one of ``compatible``,
``incompatible`` (every rule holds, compatibility not established), ``undecided`` (neither:
more questions would decide) or ``not_evaluable``. Both claims can hold at once when the churn
is established but below the margin (a margin above ``min_d_pp``, or rules without a D
threshold): the margin is what the release tolerates, so that is ``compatible`` (the rules'
outcomes still show the churn).
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from snapaudit.stats.fields import Checks

# the answer kernels, and the trajectory kernels of answers with steps (stats/trajectory.py)
Kernel = Literal["exact", "semantic", "tools", "queries", "documents"]
Statistic = Literal["d_hat", "lcb95"]
Op = Literal[">=", ">"]
_OPS = {">=": operator.ge, ">": operator.gt, "<": operator.lt}


@dataclass(frozen=True, slots=True)
class GateRule:
    """One inequality on one kernel's statistic, e.g. ``exact lcb95 > 0``."""

    kernel: Kernel
    statistic: Statistic
    op: Op
    threshold: float

    def __post_init__(self) -> None:
        check = Checks(self)
        check.choice("kernel", get_args(Kernel))
        check.choice("statistic", get_args(Statistic))
        check.choice("op", get_args(Op))
        check.number("threshold")
        check.done()

    def describe(self) -> str:
        return f"{self.kernel} {self.statistic} {self.op} {self.threshold:g}"


Profile = Literal["study", "long-form", "exact-only"]


def profile_rules(profile: Profile, min_d_pp: float = 3.0) -> tuple[GateRule, ...]:
    """The rules of a named gate profile."""
    def d(kernel: Kernel) -> GateRule:
        return GateRule(kernel=kernel, statistic="d_hat", op=">=", threshold=min_d_pp)

    def lcb(kernel: Kernel) -> GateRule:
        return GateRule(kernel=kernel, statistic="lcb95", op=">", threshold=0.0)

    if profile == "long-form":
        return (d("semantic"), lcb("semantic"))
    if profile == "exact-only":
        return (d("exact"), lcb("exact"))
    return (d("exact"), lcb("exact"), lcb("semantic"))


def default_rules() -> tuple[GateRule, ...]:
    return profile_rules("study")


@dataclass(frozen=True, slots=True)
class GateConfig:
    """The rules of the gate, all of which must hold (intersection-union test).

    ``rules`` (explicit) wins over ``profile``; with neither, the profile is ``study`` for
    short answers and ``long-form`` for long ones (resolved by the protocol).
    """

    profile: Profile | None = None
    min_d_pp: float = 3.0
    rules: tuple[GateRule, ...] | None = None
    # COMPATIBLE when every gate kernel's ucb95 is below it (pp); None: no such verdict
    margin_pp: float | None = None

    def __post_init__(self) -> None:
        check = Checks(self)
        check.choice("profile", (*get_args(Profile), None))
        check.number("min_d_pp", ge=0.0)
        if self.margin_pp is not None:  # D is within +-100 pp: 100 could never fail
            check.number("margin_pp", gt=0.0, lt=100.0)
        if self.rules is not None:
            if not isinstance(self.rules, list | tuple) or not all(
                    isinstance(r, GateRule) for r in self.rules):
                check.fail("rules", f"must be a list of GateRule, got {self.rules!r:.60}")
            elif not self.rules:
                check.fail("rules", "has 0 item(s); needs at least 1")
            else:
                check.set("rules", tuple(self.rules))
        check.done()

    def active_rules(self) -> tuple[GateRule, ...]:
        if self.rules is not None:
            return self.rules
        return profile_rules(self.profile or "study", self.min_d_pp)

    def kernels(self) -> set[str]:
        """The kernels the gate's rules need."""
        return {r.kernel for r in self.active_rules()}

    def describe(self) -> str:
        return "custom rules" if self.rules is not None else f"profile {self.profile or 'study'!r}"


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
NOT_EVALUABLE = "not_evaluable"
COMPATIBLE = "compatible"
UNDECIDED = "undecided"


@dataclass(frozen=True, slots=True)
class GateResult:
    passed: bool
    rules: tuple[RuleOutcome, ...]
    profile: str | None = None
    margin_pp: float | None = None
    # with a margin: "<kernel> ucb95 < M" for every kernel the rules name
    compatibility: tuple[RuleOutcome, ...] = ()

    @property
    def evaluable(self) -> bool:
        return all(r.value is not None for r in (*self.rules, *self.compatibility))

    @property
    def compatible(self) -> bool:
        """Every gate kernel's upper bound is below the margin (False without a margin)."""
        return bool(self.compatibility) and all(r.passed for r in self.compatibility)

    @property
    def reason(self) -> str | None:
        """Why the gate could not be evaluated (None when it could)."""
        missing = [f"{r.rule}: {r.note}" for r in self.rules if r.value is None]
        return "; ".join(missing) if missing else None

    @property
    def verdict(self) -> str:
        """``not_evaluable`` when a rule's kernel was not computed; ``compatible`` when every
        gate kernel is below the margin; ``incompatible`` when the gate passed (excess churn
        established); else ``undecided`` with a margin, ``excess_churn_not_shown`` without."""
        if not self.evaluable:
            return NOT_EVALUABLE
        if self.compatible:
            return COMPATIBLE
        if self.passed:
            return INCOMPATIBLE
        return UNDECIDED if self.margin_pp is not None else NOT_SHOWN

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {"passed": self.passed, "verdict": self.verdict,
                                  "profile": self.profile, "reason": self.reason,
                                  "rules": [r.to_json() for r in self.rules]}
        if self.margin_pp is not None:  # only then: gates without a margin are unchanged
            out["margin_pp"] = self.margin_pp
            out["compatibility"] = [r.to_json() for r in self.compatibility]
        return out


def evaluate(config: GateConfig, stats: Mapping[str, Mapping[str, float]]) -> GateResult:
    """Apply every rule to ``stats[kernel][statistic]`` (D, lcb95 and ucb95 in pp), and with
    a margin the compatibility check to each gate kernel's ``ucb95``."""
    outcomes: list[RuleOutcome] = []
    for rule in config.active_rules():
        value = stats.get(rule.kernel, {}).get(rule.statistic)
        note = None
        if value is None:
            passed = False
            note = (f"{rule.kernel} kernel not computed"
                    + (" (no pair labels given: set a judge, or use gate profile "
                       "'exact-only' for short answers)" if rule.kernel == "semantic" else
                       "" if rule.kernel == "exact" else " (the answers carry no steps)"))
        else:
            passed = bool(_OPS[rule.op](value, rule.threshold))
        outcomes.append(RuleOutcome(rule.describe(), rule.kernel, rule.statistic, rule.op,
                                    rule.threshold, value, passed, note))
    profile = None if config.rules is not None else (config.profile or "study")
    return GateResult(all(o.passed for o in outcomes), tuple(outcomes), profile,
                      config.margin_pp, _compatibility(config, stats))


def _compatibility(config: GateConfig, stats: Mapping[str, Mapping[str, float]]
                   ) -> tuple[RuleOutcome, ...]:
    margin = config.margin_pp
    if margin is None:
        return ()
    out = []
    for kernel in sorted(config.kernels()):
        value = stats.get(kernel, {}).get("ucb95")
        out.append(RuleOutcome(f"{kernel} ucb95 < {margin:g}", kernel, "ucb95", "<", margin,
                               value, value is not None and value < margin,
                               None if value is not None else f"{kernel} kernel not computed"))
    return tuple(out)
