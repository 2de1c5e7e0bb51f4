"""One verdict vocabulary and the small-sample check (hand-computed needs)."""

from __future__ import annotations

import numpy as np

from snapaudit.stats.gate import GateConfig, GateResult, evaluate
from snapaudit.stats.power import MIN_QUESTIONS, SampleCheck, sample_check
from snapaudit.stats.verdict import verdict_of


def test_sample_check_uses_the_plan_formula_at_the_gate_threshold() -> None:
    # exact D_i in pp: 100, 100, 0, 0 -> sd = sqrt(4 * 2500 / 3) = 57.735 pp.
    # Target D = 3 pp (the gate's d_hat threshold); the d_hat rule never passes 50% there,
    # so the need is the exact lcb95 rule's: ((z.8 + z.95) * 57.735 / 3)^2 = 2289.8 -> 2290.
    gate = evaluate(GateConfig(), {"exact": {"d_hat": 50.0, "lcb95": 1.0}})
    check = sample_check({"exact": np.array([1.0, 1.0, 0.0, 0.0])}, gate.rules)
    assert (check.questions, check.needed, check.target_d_pp) == (4, 2290, 3.0)
    assert check.small and check.basis == "pilot variance"
    warning = check.warning()
    assert warning is not None and warning.startswith("SMALL SAMPLE: 4 questions; 80% power")
    assert "2,290" in warning


def test_no_variance_means_the_fifty_question_bar() -> None:
    gate = evaluate(GateConfig(), {"exact": {"d_hat": 100.0, "lcb95": 100.0}})
    five_flips = sample_check({"exact": np.ones(5)}, gate.rules)  # every D_i equal: sd 0
    assert five_flips.needed == MIN_QUESTIONS and five_flips.basis == "no variance known"
    assert five_flips.small
    enough = sample_check({"exact": np.ones(60)}, gate.rules)
    assert not enough.small and enough.warning() is None


def _gate(d_hat: float | None) -> GateResult:
    """The study gate on an exact and a semantic kernel with D = lcb95 = ``d_hat`` (None: the
    semantic kernel not computed)."""
    stats = {"exact": {"d_hat": 10.0, "lcb95": 5.0}}
    if d_hat is not None:
        stats["semantic"] = {"d_hat": d_hat, "lcb95": d_hat}
    return evaluate(GateConfig(), stats)


def test_verdict_words_are_the_same_three() -> None:
    big = SampleCheck(400, 50, 3.0, 0.8, "pilot variance")
    assert verdict_of(_gate(5.0), big).line().startswith("INCOMPATIBLE: ")
    assert verdict_of(_gate(-1.0), big).label == "EXCESS CHURN NOT SHOWN"
    not_evaluable = verdict_of(_gate(None), big)
    assert not_evaluable.label == "NOT EVALUABLE" and "semantic kernel not computed" in \
        not_evaluable.meaning
    for d in (5.0, -1.0, None):
        line = verdict_of(_gate(d), big).line()
        assert "PASSED" not in line.upper().replace("PASSED ", "") and "found" not in line
        assert "SMALL SAMPLE" not in line


def test_five_questions_never_give_an_unqualified_incompatible() -> None:
    # results without a sample section fall back to the 50-question bar
    line = verdict_of(_gate(5.0), None, questions=5).line()
    assert line.startswith("INCOMPATIBLE: ")
    assert "SMALL SAMPLE: 5 questions" in line and "provisional" in line
