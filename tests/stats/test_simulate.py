"""Hand-checkable simulation cases: analytic true D, per-question D_i, the real analysis."""

from __future__ import annotations

import numpy as np
import pytest

from snapaudit.stats.analysis import AnalysisConfig, analyze
from snapaudit.stats.simulate import (
    FLIP,
    NEW,
    NOISY,
    OLD,
    PARAPHRASE,
    SHIFT,
    STABLE,
    Mixture,
    QuestionType,
    cohort_tables,
    cohort_values,
    fact_of,
    per_question_d,
    simulate_cohort,
    standard_mixture,
)


def test_two_answer_mixture_true_d_by_hand() -> None:
    # old {A: .8, B: .2}, new {A: .5, B: .5}:
    # within = ((.64 + .04) + (.25 + .25)) / 2 = .59, cross = .8*.5 + .2*.5 = .5, D = .09
    qt = QuestionType("two", {"fact 0": 0.8, "fact 1": 0.2}, {"fact 0": 0.5, "fact 1": 0.5})
    assert qt.true_d("exact") == pytest.approx(0.09, abs=1e-15)
    assert qt.true_d("semantic") == pytest.approx(0.09, abs=1e-15)


def test_paraphrase_is_churn_for_exact_only() -> None:
    assert fact_of("fact 0 variant 1") == "fact 0"
    assert PARAPHRASE.true_d("exact") == 1.0
    assert PARAPHRASE.true_d("semantic") == 0.0
    assert FLIP.true_d("exact") == FLIP.true_d("semantic") == 1.0
    # shift: within = ((.49 + .09) + (.09 + .25 + .04)) / 2 = .48, cross = .21 + .15 = .36
    assert SHIFT.true_d("exact") == pytest.approx(0.12, abs=1e-15)
    # noisy: same distribution in both states -> no excess churn in either kernel
    assert NOISY.true_d("exact") == pytest.approx(0.0, abs=1e-15)
    assert NOISY.true_d("semantic") == pytest.approx(0.0, abs=1e-15)


def test_standard_mixture_hits_its_target() -> None:
    for d in (0.0, 3.0, 6.0, 10.0):
        assert 100 * standard_mixture(d).true_d("exact") == pytest.approx(d, abs=1e-12)
        assert 100 * standard_mixture(d).true_d("semantic") == pytest.approx(d, abs=1e-12)
    para = standard_mixture(6.0, paraphrase_pp=6.0)
    assert 100 * para.true_d("exact") == pytest.approx(6.0)
    assert para.true_d("semantic") == pytest.approx(0.0, abs=1e-15)
    with pytest.raises(ValueError):
        standard_mixture(3.0, paraphrase_pp=4.0)


def test_per_question_d_by_hand() -> None:
    # q0: old (0, 0), new (1, 1): w = 1, c = 0 -> D = 1
    # q1: old (0, 1), new (0, 0): w = (0 + 1) / 2 = .5, c = 2/4 -> D = 0
    # q2: old (2, 2), new (2, 3): w = (1 + 0) / 2 = .5, c = 2/4 -> D = 0
    old = np.array([[0, 0], [0, 1], [2, 2]])
    new = np.array([[1, 1], [0, 0], [2, 3]])
    assert per_question_d(old, new).tolist() == [1.0, 0.0, 0.0]
    # r = 3, q: old (0, 0, 1), new (1, 1, 1): within_old = 1/3, within_new = 1,
    # w = 2/3, cross = 3/9 -> D = 1/3
    d = per_question_d(np.array([[0, 0, 1]]), np.array([[1, 1, 1]]))
    assert d[0] == pytest.approx(1 / 3)


def test_all_stable_cohort_has_zero_d_and_fails_the_gate() -> None:
    mixture = Mixture((STABLE,), (1.0,))
    assert mixture.true_d("exact") == 0.0
    cohort = simulate_cohort(mixture, 20, 2, np.random.default_rng(0))
    assert not cohort_values(cohort).any()
    rows, labels = cohort_tables(cohort)
    result = analyze(rows, labels=labels, config=AnalysisConfig(old=OLD, new=NEW, draws=200))
    for kernel in ("exact", "semantic"):
        ks = result.kernels[kernel]
        assert (ks.within, ks.cross, ks.d_hat, ks.lcb95) == (100.0, 100.0, 0.0, 0.0)
    assert not result.gate.passed


def test_all_flip_cohort_has_d_one_in_both_kernels() -> None:
    cohort = simulate_cohort(Mixture((FLIP,), (1.0,)), 10, 4, np.random.default_rng(0))
    assert (cohort_values(cohort) == 1.0).all()


@pytest.mark.parametrize("repeats", [2, 3, 4])
def test_fast_path_equals_real_analysis(repeats: int) -> None:
    cohort = simulate_cohort(standard_mixture(10.0, 2.0), 60, repeats,
                             np.random.default_rng(repeats))
    rows, labels = cohort_tables(cohort)
    assert len(rows) == 60 * 2 * repeats
    assert len(labels) == 60 * (2 * repeats) * (2 * repeats - 1) // 2
    result = analyze(rows, labels=labels, config=AnalysisConfig(old=OLD, new=NEW, draws=200))
    values = cohort_values(cohort)
    assert np.array_equal(result.per_question["exact"].d, values[:, 0])
    assert np.array_equal(result.per_question["semantic"].d, values[:, 1])


def test_simulation_is_seeded() -> None:
    mix = standard_mixture(6.0)
    a = simulate_cohort(mix, 50, 2, np.random.Generator(np.random.PCG64(5)))
    b = simulate_cohort(mix, 50, 2, np.random.Generator(np.random.PCG64(5)))
    assert np.array_equal(a.exact_old, b.exact_old) and np.array_equal(a.fact_new, b.fact_new)


def test_bad_distributions_are_refused() -> None:
    with pytest.raises(ValueError):
        QuestionType("bad", {"fact 0": 0.5}, {"fact 0": 1.0})
    with pytest.raises(ValueError):
        Mixture((STABLE, FLIP), (0.5, 0.6))
