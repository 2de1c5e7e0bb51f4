"""The margin: COMPATIBLE and UNDECIDED beside INCOMPATIBLE, hand-computed."""

from __future__ import annotations

import pytest

from snapaudit.errors import FieldErrors
from snapaudit.stats.gate import GateConfig, evaluate
from snapaudit.stats.verdict import verdict_of

EXACT = GateConfig(profile="exact-only", margin_pp=5.0)


def _key(config: GateConfig, **exact: float) -> str:
    return evaluate(config, {"exact": exact}).verdict


def test_the_four_verdicts_with_a_margin() -> None:
    assert _key(EXACT, d_hat=1.0, lcb95=-1.0, ucb95=4.99) == "compatible"
    assert _key(EXACT, d_hat=1.0, lcb95=-1.0, ucb95=5.0) == "undecided"  # strictly below
    assert _key(EXACT, d_hat=4.0, lcb95=0.5, ucb95=7.5) == "incompatible"
    # both established (churn above min_d_pp but below the margin): the margin is what the
    # release tolerates, so it is compatible; the rules still show the churn
    both = evaluate(EXACT, {"exact": {"d_hat": 3.5, "lcb95": 1.0, "ucb95": 4.0}})
    assert both.verdict == "compatible" and both.passed
    study = GateConfig(margin_pp=5.0)  # needs the semantic kernel
    assert evaluate(study, {"exact": {"d_hat": 0, "lcb95": -1, "ucb95": 1}}).verdict == \
        "not_evaluable"


def test_every_gate_kernel_must_be_below_the_margin() -> None:
    study = GateConfig(margin_pp=5.0)
    stats = {"exact": {"d_hat": 0.0, "lcb95": -2.0, "ucb95": 3.0},
             "semantic": {"d_hat": 1.0, "lcb95": -1.0, "ucb95": 6.0}}
    gate = evaluate(study, stats)
    assert gate.verdict == "undecided"
    assert [(r.rule, r.passed) for r in gate.compatibility] == [
        ("exact ucb95 < 5", True), ("semantic ucb95 < 5", False)]
    v = verdict_of(gate)
    assert v.label == "UNDECIDED" and "within 5 pp" in v.meaning


def test_without_a_margin_the_gate_and_its_json_are_unchanged() -> None:
    gate = evaluate(GateConfig(profile="exact-only"),
                    {"exact": {"d_hat": 0.0, "lcb95": -1.0, "ucb95": 0.5}})
    assert gate.verdict == "excess_churn_not_shown" and gate.compatibility == ()
    assert set(gate.to_json()) == {"passed", "verdict", "profile", "reason", "rules"}
    with_margin = evaluate(EXACT, {"exact": {"d_hat": 0.0, "lcb95": -1.0, "ucb95": 0.5}})
    assert with_margin.to_json()["margin_pp"] == 5.0
    assert verdict_of(with_margin).line().startswith(
        "COMPATIBLE: answers move less than 5 pp beyond repeat noise")


@pytest.mark.parametrize("margin", [0.0, -1.0, 100.0, 250.0])
def test_a_margin_that_cannot_decide_is_refused(margin: float) -> None:
    with pytest.raises(FieldErrors, match="margin_pp"):
        GateConfig(margin_pp=margin)
