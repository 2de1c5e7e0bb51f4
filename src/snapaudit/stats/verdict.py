"""The gate's verdict in words, one vocabulary for every output, and its exit code.

Terminal, Markdown, HTML and JSON all say one of three things, from ``gate.verdict``:

- **INCOMPATIBLE** (``incompatible``): every gate rule holds; excess churn is established;
- **EXCESS CHURN NOT SHOWN** (``excess_churn_not_shown``): some rule does not hold; this is
  not proof of compatibility;
- **NOT EVALUABLE** (``not_evaluable``): a rule's kernel was not computed; nothing was
  established either way.

Every output qualifies the verdict with the **small-sample warning** of
:mod:`snapaudit.stats.power` when the cohort is too small for the gate's claims.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from snapaudit.stats.power import DEFAULT_TARGET_PP, MIN_QUESTIONS, POWER, SampleCheck

EXIT_INCOMPATIBLE = 4
EXIT_NOT_EVALUABLE = 5
EXIT_REGRESSIONS = 6  # --fail-on regressions: a reviewed regression stands (snapaudit review)

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


def exit_code(verdict: Verdict) -> int:
    """The exit code of ``--fail-on incompatible`` (every command that takes it): 4 on
    INCOMPATIBLE, 5 on NOT EVALUABLE, else 0."""
    if verdict.key == NOT_EVALUABLE:
        return EXIT_NOT_EVALUABLE
    return EXIT_INCOMPATIBLE if verdict.key == INCOMPATIBLE else 0
