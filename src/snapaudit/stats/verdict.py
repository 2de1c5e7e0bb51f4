"""The gate's verdict in words, one vocabulary for every output, and its exit code.

Terminal, Markdown, HTML and JSON all say one of these, from ``gate.verdict``:

- **COMPATIBLE** (``compatible``, with a margin M): every gate kernel's one-sided 95% upper
  bound of D is below M; answers move less than M pp beyond repeat noise (whether or not
  some churn below M is established);
- **INCOMPATIBLE** (``incompatible``): every gate rule holds (and, with a margin,
  compatibility was not established); excess churn is established;
- **UNDECIDED** (``undecided``, with a margin): neither is established; more questions would
  decide;
- **EXCESS CHURN NOT SHOWN** (``excess_churn_not_shown``, without a margin): some rule does
  not hold; this is not proof of compatibility;
- **NOT EVALUABLE** (``not_evaluable``): a rule's kernel was not computed; nothing was
  established either way.

Every output qualifies the verdict with the **small-sample warning** of
:mod:`snapaudit.stats.power` when the cohort is too small for the gate's claims.
"""

from __future__ import annotations

from dataclasses import dataclass

from snapaudit.stats.gate import (
    COMPATIBLE,
    INCOMPATIBLE,
    NOT_EVALUABLE,
    NOT_SHOWN,
    UNDECIDED,
    GateResult,
)
from snapaudit.stats.power import DEFAULT_TARGET_PP, MIN_QUESTIONS, POWER, SampleCheck

EXIT_INCOMPATIBLE = 4
EXIT_NOT_EVALUABLE = 5
EXIT_REGRESSIONS = 6  # --fail-on regressions: a reviewed regression stands (snapaudit review)
EXIT_UNDECIDED = 7  # --fail-on not-compatible: neither claim established
NEEDS_MARGIN = ("--fail-on not-compatible needs a margin ({where}): without one there is no "
                "COMPATIBLE verdict, so the gate could never pass")

LABELS = {INCOMPATIBLE: "INCOMPATIBLE", COMPATIBLE: "COMPATIBLE", UNDECIDED: "UNDECIDED",
          NOT_SHOWN: "EXCESS CHURN NOT SHOWN", NOT_EVALUABLE: "NOT EVALUABLE"}
MEANINGS = {
    INCOMPATIBLE: "every gate rule holds: the new snapshot moves answers beyond repeat noise",
    COMPATIBLE: "answers move less than {margin} pp beyond repeat noise (every gate kernel's "
                "95% upper bound of D is below the margin)",
    UNDECIDED: "neither excess churn nor compatibility within {margin} pp is established; "
               "more questions would decide",
    NOT_SHOWN: "the gate did not establish excess churn (this is not proof of compatibility)",
    NOT_EVALUABLE: "a gate rule could not be evaluated; nothing was established either way",
}


@dataclass(frozen=True, slots=True)
class Verdict:
    key: str  # a key of LABELS, or "none"
    label: str
    meaning: str
    small_sample: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"key": self.key, "label": self.label, "meaning": self.meaning,
                "small_sample": self.small_sample, "text": self.line()}

    def line(self) -> str:
        """One line for a terminal or a report heading: label, meaning, qualifier."""
        text = f"{self.label}: {self.meaning}"
        if self.small_sample:
            text += f" [{self.small_sample}; treat this verdict as provisional]"
        return text


def verdict_of(gate: GateResult | None, sample: SampleCheck | None = None,
               questions: int | None = None) -> Verdict:
    """The verdict of a gate result, qualified by the sample check (or, for a document
    without one, the no-variance bar at ``questions``)."""
    if gate is None:
        return Verdict("none", "GATE NOT EVALUATED", "the results hold no gate")
    key = gate.verdict
    meaning = MEANINGS[key].format(margin=f"{gate.margin_pp or 0:g}")
    if key == NOT_EVALUABLE and gate.reason:
        meaning = f"{meaning} ({gate.reason})"
    return Verdict(key, LABELS[key], meaning, small_sample_warning(sample, questions))


def small_sample_warning(sample: SampleCheck | None, questions: int | None) -> str | None:
    """The results' own sample check, or the no-variance bar for older documents."""
    if sample is not None:
        return sample.warning()
    if questions is not None:
        return SampleCheck(questions, MIN_QUESTIONS, DEFAULT_TARGET_PP, POWER,
                           "no variance known").warning()
    return None


def exit_code(verdict: Verdict, require_compatible: bool = False) -> int:
    """The exit code of ``--fail-on incompatible`` (every command that takes it): 4 on
    INCOMPATIBLE, 5 on NOT EVALUABLE, else 0; of ``--fail-on not-compatible``
    (``require_compatible``): also 7 on UNDECIDED, 0 only on COMPATIBLE."""
    if verdict.key == NOT_EVALUABLE:
        return EXIT_NOT_EVALUABLE
    if verdict.key == INCOMPATIBLE:
        return EXIT_INCOMPATIBLE
    if require_compatible and verdict.key != COMPATIBLE:
        return EXIT_UNDECIDED
    return 0
