"""The upper bound of D counts one unseen churning question (stats/upper.py), by hand."""

from __future__ import annotations

import pytest

from snapaudit.stats.analysis import AnalysisConfig, analyze
from snapaudit.stats.gate import GateConfig
from tests.stats._analysis_helpers import rows

# 10 questions, no churn at all: every D_i = 0, so a bootstrap of the questions alone has
# ucb95 = 0 and would call the release COMPATIBLE at any margin
STABLE = {f"q{i:02d}": {"A": ["x", "x"], "B": ["x", "x"]} for i in range(10)}


def _exact(margin: float) -> tuple[float, str]:
    config = AnalysisConfig(old="A", new="B", draws=1000, seed=1, permutations=0,
                            gate=GateConfig(profile="exact-only", margin_pp=margin))
    res = analyze(rows(STABLE), config=config)
    ucb = res.kernels["exact"].ucb95
    assert ucb is not None
    return ucb, res.gate.verdict


def test_ten_stable_questions_bound_d_by_the_pseudo_question() -> None:
    # 11 draws from ten 0s and one 1: the sum is Binomial(11, 1/11); P(<= 2) = 0.9104 < 0.95
    # <= P(<= 3) = 0.9866, so ucb95 = 3/11 = 27.27 pp; lcb95 and D stay the questions' own
    ucb, verdict = _exact(margin=30.0)
    assert ucb == pytest.approx(100 * 3 / 11)
    assert verdict == "compatible"
    assert _exact(margin=20.0)[1] == "undecided"  # ten questions cannot show < 20 pp
