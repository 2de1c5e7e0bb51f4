"""The trajectory kernels on the planted agent world, by hand (tests/fakes/agent_world.py),
and the ``trajectory`` section of the results: typed, read back, gated, absent without steps."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from snapaudit import AnalysisConfig, analyze
from snapaudit.errors import FieldErrors
from snapaudit.results import RunResults, checked_results
from snapaudit.stats.gate import GateConfig, GateRule
from snapaudit.stats.trajectory_section import TrajectorySection
from snapaudit.tables import AnswerRow
from snapaudit.tables.records import Step
from tests.fakes.agent_world import CHANGED, DIVERGENCE, EXPECTED, agent_rows

CONFIG = AnalysisConfig(old="old", new="new", draws=500, permutations=0,
                        gate=GateConfig(profile="exact-only"))


def test_each_kernel_and_the_split_as_computed_by_hand() -> None:
    result = analyze(agent_rows(), config=CONFIG)
    assert result.trajectory is not None
    got = {**result.kernels, **result.trajectory.kernels}
    for name, (within, cross, d_hat) in EXPECTED.items():
        assert (got[name].within, got[name].cross, got[name].d_hat) == pytest.approx(
            (within, cross, d_hat)), name
    doc = result.to_json()["trajectory"]
    assert doc["changed_pairs"] == CHANGED
    assert doc["first_divergence"] == DIVERGENCE
    assert doc["rows_without_steps"] == 0
    # every D_i here lies on the r = 2 grid (quarters; documents' Jaccard 1/2 too): exact
    assert {doc["kernels"][k]["method"] for k in ("tools", "queries", "documents")} == {
        "exact"}
    assert set(doc["kernels"]["queries"]) >= {"within", "cross", "d_hat", "lcb95", "ci95"}


def test_exact_bootstrap_of_a_trajectory_kernel_by_hand() -> None:
    # tools D_i = (0, 0, 0, 0, -1/2, 0): a mean of 6 draws is -k/12 for k draws of q004
    stats = analyze(agent_rows(), config=CONFIG).trajectory.kernels["tools"]  # type: ignore[union-attr]
    assert stats.p_nonpositive == 1.0
    # P(k) = C(6,k) (1/6)^k (5/6)^(6-k): F(-3/12) = P(k >= 3) = 0.0623 >= 0.05 and
    # F(-4/12) = P(k >= 4) = 0.0087 < 0.05: lcb95 = -3/12 = -25 pp
    assert stats.lcb95 == pytest.approx(-25.0)
    # ucb95 counts one pseudo-question at D_i = +1 (stats/upper.py): 7 draws from
    # (0, 0, 0, 0, -1/2, 0, +1), sum S = b - a/2 for a draws of q004 and b of the pseudo-question;
    # P(S <= 2) = 0.9420 < 0.95 <= P(S <= 5/2) = 0.9633 (by enumeration): ucb95 = 2.5/7
    assert stats.ucb95 == pytest.approx(100 * 2.5 / 7)


def test_results_read_back_into_the_same_types() -> None:
    result = analyze(agent_rows(), config=CONFIG)
    doc = json.loads(json.dumps(RunResults(result).to_json()))
    back = checked_results(doc)
    assert isinstance(back.analysis.trajectory, TrajectorySection)
    assert back.analysis.trajectory == result.trajectory
    assert back.to_json() == doc


def test_answers_without_steps_have_no_trajectory_section() -> None:
    rows = [replace(r, steps=None) for r in agent_rows()]
    result = analyze(rows, config=CONFIG)
    assert result.trajectory is None and "trajectory" not in result.to_json()


def test_a_row_without_steps_is_an_empty_trajectory_and_counted() -> None:
    rows = agent_rows()
    # q000 old repeat 1 without steps: tools and queries within(old) 0, cross 1/2 of q000;
    # documents: the empty set against {d0}: Jaccard 0
    rows[0] = replace(rows[0], steps=None)
    section = analyze(rows, config=CONFIG).trajectory
    assert section is not None and section.rows_without_steps == 1
    assert section.kernels["tools"].within == pytest.approx(100 * (4 + 0.5) / 6)
    assert section.kernels["tools"].cross == pytest.approx(100 * (4.5 + 0.5) / 6)


def test_documents_of_two_empty_trajectories_agree() -> None:
    rows = [AnswerRow(q, s, r, "same", steps=() if q == "q1" else (Step("s", "x", ("d",)),))
            for q in ("q1", "q2") for s in ("old", "new") for r in (1, 2)]
    section = analyze(rows, config=CONFIG).trajectory
    assert section is not None
    docs = section.kernels["documents"]
    assert (docs.within, docs.cross, docs.d_hat) == (100.0, 100.0, 0.0)
    assert section.first_divergence.cross.identical == 8


def test_a_gate_rule_may_name_a_trajectory_kernel() -> None:
    gate = GateConfig(rules=(GateRule("queries", "d_hat", ">=", 10.0),))
    result = analyze(agent_rows(), config=replace(CONFIG, gate=gate))
    assert result.gate.rules[0].value == pytest.approx(100 / 6)
    assert result.gate.passed
    plain = [replace(r, steps=None) for r in agent_rows()]
    missing = analyze(plain, config=replace(CONFIG, gate=gate)).gate
    assert missing.verdict == "not_evaluable"
    assert missing.reason == ("queries d_hat >= 10: queries kernel not computed (the answers "
                              "carry no steps)")


def test_a_sequential_design_refuses_a_trajectory_gate_rule() -> None:
    gate = GateConfig(rules=(GateRule("tools", "lcb95", ">", 0.0),))
    with pytest.raises(FieldErrors, match="trajectory kernel"):
        AnalysisConfig(old="old", new="new", looks=2, gate=gate)


def test_a_jaccard_off_the_grid_takes_the_draws() -> None:
    rows = agent_rows()
    three = (Step("search", "item 4", ("d4", "d4b", "d4c")),)
    rows = [replace(r, steps=three) if (r.question_id, r.state, r.repeat) == ("q004", "new", 2)
            else r for r in rows]
    section = analyze(rows, config=CONFIG).trajectory
    assert section is not None
    assert section.kernels["documents"].method == "draws"
    assert section.kernels["tools"].method == "exact"
