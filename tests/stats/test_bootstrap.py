"""The count-based whole-question bootstrap against a straightforward index resampler."""

from __future__ import annotations

import numpy as np
import pytest

from snapaudit.stats.bootstrap import summarize, whole_question_bootstrap


def index_resample(values: np.ndarray, draws: int, seed: int) -> np.ndarray:
    """Independent reference: resample question indices, average the gathered rows."""
    rng = np.random.default_rng(seed)
    n = values.shape[0]
    out = np.empty((draws, values.shape[1]))
    for b in range(0, draws, 1000):
        idx = rng.integers(0, n, size=(min(1000, draws - b), n))
        out[b:b + idx.shape[0]] = values[idx].mean(axis=1)
    return out


def _values(n: int, seed: int = 1) -> np.ndarray:
    rng = np.random.default_rng(seed)
    exact = rng.choice([-0.5, -0.25, 0.0, 0.25, 0.5, 1.0], size=n, p=[.05, .1, .5, .15, .1, .1])
    semantic = np.clip(exact + rng.choice([0.0, 0.25, 0.5], size=n), -1, 1)
    return np.column_stack([exact, semantic])


def test_distribution_matches_index_resampling() -> None:
    v = _values(80)
    ours = whole_question_bootstrap(v, draws=40_000, seed=7)
    ref = index_resample(v, 40_000, seed=8)
    np.testing.assert_array_equal(ours.point, v.mean(axis=0))   # point estimate: exact
    se = ref.std(axis=0)
    np.testing.assert_allclose(ours.draws.mean(axis=0), ref.mean(axis=0), atol=0.05 * se.max())
    np.testing.assert_allclose(ours.draws.std(axis=0), se, rtol=0.03)
    for q in (2.5, 5.0, 50.0, 97.5):
        np.testing.assert_allclose(np.percentile(ours.draws, q, axis=0),
                                   np.percentile(ref, q, axis=0), atol=0.12 * se.max())
    # the two kernels are resampled jointly: their correlation is reproduced
    c_ours = np.corrcoef(ours.draws.T)[0, 1]
    c_ref = np.corrcoef(ref.T)[0, 1]
    assert abs(c_ours - c_ref) < 0.03 and c_ref > 0.3


def test_deterministic_and_chunk_independent() -> None:
    v = _values(50)
    a = whole_question_bootstrap(v, draws=5_000, seed=3)
    b = whole_question_bootstrap(v, draws=5_000, seed=3)
    np.testing.assert_array_equal(a.draws, b.draws)
    c = whole_question_bootstrap(v, draws=5_000, seed=3, chunk_elements=7)
    np.testing.assert_array_equal(a.draws, c.draws)
    assert not np.array_equal(a.draws, whole_question_bootstrap(v, 5_000, seed=4).draws)


def test_invariant_to_question_order() -> None:
    v = _values(60)
    perm = np.random.default_rng(0).permutation(60)
    a = whole_question_bootstrap(v, draws=2_000, seed=1)
    b = whole_question_bootstrap(v[perm], draws=2_000, seed=1)
    np.testing.assert_array_equal(a.draws, b.draws)


def test_documented_stream() -> None:
    """The stream is exactly: unique rows (lexicographic), multinomial counts, counts @ U / n."""
    v = np.array([[0.5], [0.0], [0.5], [1.0]])
    boot = whole_question_bootstrap(v, draws=10, seed=11)
    rng = np.random.Generator(np.random.PCG64(11))
    counts = rng.multinomial(4, [1 / 4, 2 / 4, 1 / 4], size=10)   # rows 0.0, 0.5, 1.0
    np.testing.assert_array_equal(boot.draws[:, 0], counts @ np.array([0.0, 0.5, 1.0]) / 4)
    assert boot.categories == 3


def test_constant_values_and_summary() -> None:
    boot = whole_question_bootstrap(np.zeros(10), draws=100, seed=0)
    iv = boot.summary(0, scale=100)
    assert (iv.point, iv.lcb95, iv.ci95, iv.p_nonpositive) == (0.0, 0.0, (0.0, 0.0), 1.0)
    iv = summarize(1.0, np.arange(1, 101, dtype=float))
    # numpy linear percentiles of 1..100: 5th = 5.95, 2.5th = 3.475, 97.5th = 97.525
    assert iv.lcb95 == pytest.approx(5.95)
    assert iv.ci95 == pytest.approx((3.475, 97.525))
    assert iv.p_nonpositive == 0.0
    with pytest.raises(ValueError):
        whole_question_bootstrap(np.zeros((0, 2)), draws=10, seed=0)
