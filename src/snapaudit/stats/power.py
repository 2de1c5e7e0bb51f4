"""The small-sample check: is the cohort large enough for the gate's claims to carry weight?

A cohort is small when it has fewer questions than ``snapaudit plan`` asks for 80% power at
the gate's threshold, using the audit's own per-question D_i as the pilot: the target true D
is the largest ``d_hat`` threshold of the gate's rules (3 pp by default) and the need is the
largest of the rules that can reach that power there (a rule whose threshold equals the
target never exceeds 50%). When no variance is known (fewer than 2 questions, or every D_i
equal) the bar is :data:`MIN_QUESTIONS` questions. The verdict (:mod:`snapaudit.stats.verdict`)
qualifies itself with this check's warning.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from snapaudit.stats.codec import decode
from snapaudit.stats.gate import GateRule
from snapaudit.stats.plan import rule_need

MIN_QUESTIONS = 50
POWER = 0.8
DEFAULT_TARGET_PP = 3.0


@dataclass(frozen=True, slots=True)
class SampleCheck:
    """Whether the cohort is large enough for the gate's claims to carry weight."""

    questions: int
    needed: int
    target_d_pp: float
    power: float
    basis: str  # "pilot variance" (the audit's own sd of D_i) or "no variance known"

    @property
    def small(self) -> bool:
        return self.questions < self.needed

    def warning(self) -> str | None:
        if not self.small:
            return None
        if self.basis == "no variance known":
            why = f"below the {self.needed} questions assumed when no variance is known"
        else:
            why = (f"{100 * self.power:g}% power at D = {self.target_d_pp:g} pp needs about "
                   f"{self.needed:,} (snapaudit plan, this audit's variance)")
        return f"SMALL SAMPLE: {self.questions} questions; {why}"

    def to_json(self) -> dict[str, object]:
        return {"questions": self.questions, "needed": self.needed,
                "target_d_pp": self.target_d_pp, "power": self.power, "basis": self.basis,
                "small": self.small, "warning": self.warning()}

    @classmethod
    def from_json(cls, data: object) -> SampleCheck:
        return decode(cls, data)  # small and warning follow from the fields


def sample_check(d_values: Mapping[str, np.ndarray], rules: Sequence[Any],
                 power: float = POWER) -> SampleCheck:
    """``d_values``: per-question D_i (fractions) per kernel; ``rules``: the gate's rules
    (anything with ``kernel``, ``statistic``, ``op`` and ``threshold``)."""
    n = max((len(v) for v in d_values.values()), default=0)
    targets = [float(r.threshold) for r in rules if r.statistic == "d_hat"]
    target = max([t for t in targets if t > 0], default=DEFAULT_TARGET_PP)
    needs = []
    for r in rules:
        values = d_values.get(r.kernel)
        if values is None or len(values) < 2 or float(r.threshold) >= target:
            continue
        sd = 100 * float(np.std(values, ddof=1))
        if sd <= 0:
            continue
        rule = GateRule(kernel=r.kernel, statistic=r.statistic, op=r.op,
                        threshold=float(r.threshold))
        need = rule_need(rule, sd, target, power).questions
        if need is not None:
            needs.append(need)
    if not needs:
        return SampleCheck(n, MIN_QUESTIONS, target, power, "no variance known")
    return SampleCheck(n, max(needs), target, power, "pilot variance")
