"""Interim looks bootstrap their questions plus the two ends of D_i's range; the last look
(and so the fixed design) does not."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import multinomial

from snapaudit.stats.cluster import Resampling
from snapaudit.stats.gate import GateConfig
from snapaudit.stats.sequential import LookData, take_looks, with_range
from snapaudit.stats.spending import nominal_levels


def _data(values: np.ndarray, resampling: Resampling | None = None) -> LookData:
    return LookData(values, ("exact",), resampling or Resampling(), 2, 2000, 0, "exact")


def test_a_block_without_churn_does_not_decide_at_an_interim_look() -> None:
    # look 1 of 8 over 400 questions sees 50, every D_i = 0. Its bootstrap runs over them and
    # D_i = -1 and +1: the mean is (plus - minus) / 52 with (plus, minus, zeros) multinomial
    # (52; 1/52, 1/52, 50/52). The upper bound is the smallest j / 52 whose CDF reaches
    # 1 - p_1, computed here by enumerating the counts.
    p1 = nominal_levels([k / 8 for k in range(1, 9)], 0.05)[0]
    counts = np.array([(a, b, 52 - a - b) for a in range(53) for b in range(53 - a)])
    pmf = multinomial(52, [1 / 52, 1 / 52, 50 / 52]).pmf(counts)
    diff = counts[:, 0] - counts[:, 1]
    j_star = min(j for j in range(53) if pmf[diff <= j].sum() >= 1 - p1 - 1e-12)
    assert j_star == 9  # P(plus - minus >= 10) < 3e-8 <= P(plus - minus >= 9)
    values = np.zeros((400, 1))
    seq = take_looks(_data(values), GateConfig(margin_pp=5.0, profile="exact-only"),
                     8, 400)
    first = seq.looks[0]
    assert first.kernels["exact"].ucb == pytest.approx(100 * j_star / 52, abs=1e-9)
    assert first.kernels["exact"].ucb > 5.0 and first.decision == "continue"
    assert first.kernels["exact"].d_hat == 0.0  # the estimate is the real questions' mean


def test_the_last_look_keeps_the_fixed_designs_bounds() -> None:
    # one look (the fixed design) over 50 questions with D_i = 0: every resample is 0, so
    # both bounds are 0 and the gate says COMPATIBLE within 5 pp
    seq = take_looks(_data(np.zeros((50, 1))),
                     GateConfig(margin_pp=5.0, profile="exact-only"), 1, 50)
    (look,) = seq.looks
    assert (look.kernels["exact"].lcb, look.kernels["exact"].ucb) == (0.0, 0.0)
    assert look.decision == "compatible" and look.nominal == pytest.approx(0.05)


def test_the_range_is_two_extreme_questions_in_every_kernel() -> None:
    values = np.array([[0.25, 0.0], [0.5, 0.5]])
    out, res = with_range(values, Resampling())
    assert out.tolist() == [[0.25, 0.0], [0.5, 0.5], [-1.0, -1.0], [1.0, 1.0]]
    assert res.groups is None
    # under cluster resampling each pseudo-question is a cluster of its own
    _, clustered = with_range(values, Resampling("cluster", np.array([0, 0])))
    assert clustered.groups is not None and clustered.groups.tolist() == [0, 0, 1, 2]
