"""The gate's verdict in words, and the small-sample check: one vocabulary for every output.

Terminal, Markdown, HTML and JSON all say one of three things, from ``gate.verdict``:

- **INCOMPATIBLE** (``incompatible``): every gate rule holds; excess churn is established;
- **EXCESS CHURN NOT SHOWN** (``excess_churn_not_shown``): some rule does not hold; this is
  not proof of compatibility;
- **NOT EVALUABLE** (``not_evaluable``): a rule's kernel was not computed; nothing was
  established either way.

Every output qualifies the verdict with a **small-sample warning** when the cohort has fewer
questions than ``snapaudit plan`` asks for 80% power at the gate's threshold, using the
audit's own per-question D_i as the pilot: the target true D is the largest ``d_hat``
threshold of the gate's rules (3 pp by default) and the need is the largest of the rules that
can reach that power there (a rule whose threshold equals the target never exceeds 50%).
When no variance is known (fewer than 2 questions, or every D_i equal) the bar is
:data:`MIN_QUESTIONS` questions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from snapaudit.stats.gate import GateRule
from snapaudit.stats.plan import rule_need

MIN_QUESTIONS = 50
POWER = 0.8
DEFAULT_TARGET_PP = 3.0

INCOMPATIBLE = "incompatible"
NOT_SHOWN = "excess_churn_not_shown"
NOT_EVALUABLE = "not_evaluable"

LABELS = {INCOMPATIBLE: "INCOMPATIBLE", NOT_SHOWN: "EXCESS CHURN NOT SHOWN",
          NOT_EVALUABLE: "NOT EVALUABLE"}
MEANINGS = {
    INCOMPATIBLE: "every gate rule holds: the new snapshot moves answers beyond repeat noise",
    NOT_SHOWN: "the gate did not establish excess churn (this is not proof of compatibility)",
    NOT_EVALUABLE: "a gate rule could not be evaluated; nothing was established either way",
}


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


@dataclass(frozen=True, slots=True)
class Verdict:
    key: str  # incompatible | excess_churn_not_shown | not_evaluable | none
    label: str
    meaning: str
    small_sample: str | None = None

    def line(self) -> str:
        """One line for a terminal or a report heading: label, meaning, qualifier."""
        text = f"{self.label}: {self.meaning}"
        if self.small_sample:
            text += f" [{self.small_sample}; treat this verdict as provisional]"
        return text


def gate_key(gate: Mapping[str, Any] | None) -> str:
    """The verdict key of a results document's ``gate`` section."""
    if not isinstance(gate, Mapping) or gate.get("passed") is None:
        return "none"
    key = gate.get("verdict")
    if key in LABELS:
        return str(key)
    return INCOMPATIBLE if gate.get("passed") else NOT_SHOWN


def verdict_of(results: Mapping[str, Any]) -> Verdict:
    """The verdict of a results document (``results.json`` or ``AnalysisResult.to_json()``)."""
    gate = results.get("gate")
    key = gate_key(gate if isinstance(gate, Mapping) else None)
    if key == "none":
        return Verdict("none", "GATE NOT EVALUATED", "the results hold no gate")
    meaning = MEANINGS[key]
    reason = gate.get("reason") if isinstance(gate, Mapping) else None
    if key == NOT_EVALUABLE and reason:
        meaning = f"{meaning} ({reason})"
    return Verdict(key, LABELS[key], meaning, small_sample_warning(results))


def small_sample_warning(results: Mapping[str, Any]) -> str | None:
    """The results' own sample check, or the no-variance bar for older documents."""
    sample = results.get("sample")
    if isinstance(sample, Mapping) and "small" in sample:
        warning = sample.get("warning")
        return str(warning) if sample.get("small") and warning else None
    comparison = results.get("comparison")
    n = comparison.get("questions") if isinstance(comparison, Mapping) else None
    if isinstance(n, int):
        return SampleCheck(n, MIN_QUESTIONS, DEFAULT_TARGET_PP, POWER,
                           "no variance known").warning()
    return None
