"""Sequential looks: blocks, stops, the table cut at the stop, the same code as a run."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import binom

from snapaudit.errors import ConfigError, InputError
from snapaudit.stats.analysis import AnalysisConfig, analyze
from snapaudit.stats.cluster import Resampling
from snapaudit.stats.gate import GateConfig
from snapaudit.stats.sequential import (
    LookData,
    block_sizes,
    check_design,
    take_looks,
)
from snapaudit.stats.simulate import cohort_tables, cohort_values, simulate_cohort, standard_mixture
from snapaudit.stats.upper import with_top
from snapaudit.tables import AnswerRow


def _data(values: np.ndarray) -> LookData:
    return LookData(values.reshape(len(values), -1), ("exact",), Resampling(), 2, 1000, 0,
                    "exact")


EXACT = GateConfig(profile="exact-only")


def test_blocks_are_floors_of_k_n_over_k() -> None:
    assert block_sizes(400, 8) == (50, 100, 150, 200, 250, 300, 350, 400)
    assert block_sizes(45, 4) == (11, 22, 33, 45)


@pytest.mark.parametrize(("planned", "looks", "message"), [
    (100, 0, "looks must be at least 1"),
    (95, 10, "first block of 9 question"),
])
def test_a_design_that_cannot_be_run_is_one_line(planned: int, looks: int,
                                                  message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        check_design(planned, looks)
    check_design(100, 10)  # ten questions a look: allowed


def test_every_question_flipped_stops_at_the_first_look() -> None:
    # D_i = 1 everywhere: the bootstrap of a constant is the constant, so both bounds are
    # 100 pp at every level: the first look already establishes INCOMPATIBLE
    seq = take_looks(_data(np.ones(80)), EXACT, 4, 80)
    assert [(k.look, k.questions, k.decision) for k in seq.looks] == [(1, 20, "incompatible")]
    assert seq.stopped and seq.stop_reason == "incompatible" and seq.questions_used == 20
    assert seq.looks[0].kernels["exact"].lcb == seq.looks[0].kernels["exact"].ucb == 100.0


def test_no_churn_with_a_margin_stops_compatible_and_without_one_runs_to_the_end() -> None:
    # D_i = 0 everywhere. The lower bound is the plain bootstrap's: 0 at every look. The
    # upper bound (K > 1) is over the look's n questions plus one pseudo-question at D_i = 1,
    # so it is 100 j / (n + 1) with j the 1 - p_k quantile of Binomial(n + 1, 1 / (n + 1))
    # (how often the pseudo-question is drawn): p = 8.9e-5, 0.0055, 0.022 at looks 1-3 of 4
    # give j = 6, 4, 3 (P(Bin > j) = 2.5e-5, 0.0034, 0.019): 28.6, 9.8 and 4.9 pp, so a
    # 5 pp margin is established at look 3 of 4 (60 of 80 questions), not at look 1 as a
    # bound of 0 would
    zeros = _data(np.zeros(80))
    margin = take_looks(zeros, GateConfig(profile="exact-only", margin_pp=5.0), 4, 80)
    assert [k.decision for k in margin.looks] == ["continue", "continue", "compatible"]
    ucbs = [k.kernels["exact"].ucb for k in margin.looks]
    assert ucbs == pytest.approx([600 / 21, 400 / 41, 300 / 61], abs=1e-9)
    assert [k.kernels["exact"].lcb for k in margin.looks] == [0.0] * 3
    for look, n in zip(margin.looks, (20, 40, 60), strict=True):
        j = binom.ppf(1 - look.nominal, n + 1, 1 / (n + 1))
        assert look.kernels["exact"].ucb == pytest.approx(100 * j / (n + 1), abs=1e-9)
    plain = take_looks(zeros, EXACT, 4, 80)
    assert [k.decision for k in plain.looks] == ["continue"] * 3 + ["excess_churn_not_shown"]
    assert plain.stop_reason == "last_look" and not plain.stopped


def test_a_first_block_without_churn_does_not_pass_compatible_at_the_margin() -> None:
    # D = 5 pp = M, all of it in 20 flipped questions, none among the first 50: the plain
    # bootstrap's upper bound over the first block is 0 (COMPATIBLE at look 1 as first
    # landed); with the pseudo-question it is 100 * 10 / 51 (the 1 - 3e-8 quantile of
    # Binomial(51, 1/51) is 10), no look establishes COMPATIBLE, and look 4 (200 questions,
    # 9 flips: D = 4.5 pp, lower bound 1 pp) establishes INCOMPATIBLE (D = 5 > 0)
    values = np.zeros(400)
    values[50 + 17 * np.arange(20)] = 1.0
    seq = take_looks(_data(values), GateConfig(profile="exact-only", margin_pp=5.0), 8, 400)
    assert seq.looks[0].kernels["exact"].ucb == pytest.approx(1000 / 51, abs=1e-9)
    assert seq.looks[0].kernels["exact"].lcb == 0.0
    assert [k.decision for k in seq.looks] == ["continue"] * 3 + ["incompatible"]
    assert seq.looks[-1].kernels["exact"].d_hat == pytest.approx(4.5)


def test_the_pseudo_question_is_its_own_cluster() -> None:
    values = np.zeros((6, 1))
    padded, res = with_top(values, Resampling("cluster", np.array([0, 0, 1, 1, 2, 2])))
    assert padded[:, 0].tolist() == [0.0] * 6 + [1.0]
    assert res.groups is not None and res.groups.tolist() == [0, 0, 1, 1, 2, 2, 3]
    # clustered looks draw (Monte Carlo): at look 1's level the upper bound is the largest
    # draw, which holds the pseudo-cluster: above 0
    groups = np.repeat(np.arange(40), 2)
    data = LookData(np.zeros((80, 1)), ("exact",), Resampling("cluster", groups), 2, 1000, 0,
                    "exact")
    seq = take_looks(data, GateConfig(profile="exact-only", margin_pp=5.0), 4, 80)
    assert seq.looks[0].decision == "continue" and seq.looks[0].kernels["exact"].ucb > 5.0


def test_one_look_bound_is_the_fixed_designs_lcb95() -> None:
    cohort = simulate_cohort(standard_mixture(6.0), 120, 2, np.random.default_rng(5))
    rows, labels = cohort_tables(cohort)
    fixed = analyze(rows, config=AnalysisConfig(old="old", new="new", permutations=0),
                    labels=labels)
    values = cohort_values(cohort)
    seq = take_looks(LookData(values, ("exact", "semantic"), Resampling(), 2, 1000, 0,
                              "exact"), GateConfig(), 1, 120)
    (look,) = seq.looks
    assert look.nominal == pytest.approx(0.05)
    for name in ("exact", "semantic"):
        assert look.kernels[name].lcb == pytest.approx(fixed.kernels[name].lcb95, abs=1e-9)
        assert look.kernels[name].ucb == pytest.approx(fixed.kernels[name].ucb95, abs=1e-9)


def test_analyze_with_looks_is_take_looks_on_the_tables_order_and_cuts_the_table() -> None:
    cohort = simulate_cohort(standard_mixture(30.0), 200, 2, np.random.default_rng(9))
    rows, labels = cohort_tables(cohort)
    config = AnalysisConfig(old="old", new="new", permutations=0, looks=4, draws=1000)
    result = analyze(rows, config=config, labels=labels)
    direct = take_looks(LookData(cohort_values(cohort), ("exact", "semantic"), Resampling(),
                                 2, 1000, 0, "exact"), GateConfig(), 4, 200,
                        calls_per_question=4)
    assert result.sequential == direct  # the same looks, number for number
    assert result.sequential is not None and result.sequential.stopped
    used = result.sequential.questions_used
    assert used < 200 and result.comparison.questions == used
    # the gate read the stopping look's repeated bounds, not the fixed-sample ones
    stop = result.sequential.looks[-1].kernels
    assert result.kernels["exact"].lcb95 == stop["exact"].lcb
    assert result.verdict().key == "incompatible"
    doc = result.to_json()
    assert doc["sequential"]["questions_planned"] == 200  # type: ignore[index]


def test_looks_follow_first_appearance_not_the_sorted_ids() -> None:
    # the first 20 questions (ids z..) flip, the other 20 (ids a..) do not; the table lists
    # the z.. questions first, so the first look (20 questions) sees only flips
    rows = []
    for i in range(40):
        qid = f"z{i:02d}" if i < 20 else f"a{i:02d}"
        for state in ("old", "new"):
            for rep in (1, 2):
                text = f"{state} {qid}" if i < 20 else f"same {qid}"
                rows.append(AnswerRow(qid, state, rep, text))
    config = AnalysisConfig(old="old", new="new", permutations=0, looks=2, draws=500,
                            gate=EXACT)
    result = analyze(rows, config=config)
    assert result.sequential is not None
    assert [k.questions for k in result.sequential.looks] == [20]
    assert result.comparison.questions == 20 and result.kernels["exact"].d_hat == 100.0


def test_a_table_that_ends_before_a_needed_look_is_refused() -> None:
    cohort = simulate_cohort(standard_mixture(0.0), 60, 2, np.random.default_rng(1))
    rows, _ = cohort_tables(cohort)
    config = AnalysisConfig(old="old", new="new", permutations=0, looks=4,
                            planned_questions=100, gate=EXACT, draws=500)
    with pytest.raises(InputError, match="look 3 of 4 needs the first 75 of 100"):
        analyze(rows, config=config)
