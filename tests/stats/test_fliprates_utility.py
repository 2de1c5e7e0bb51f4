"""Flip rates against gold and paired utility deltas: hand values and differential checks."""

from __future__ import annotations

import numpy as np
import pytest

from snapaudit.stats.analysis import AnalysisConfig, analyze
from snapaudit.stats.cluster import Resampling
from snapaudit.stats.fliprates import flip_rates
from snapaudit.stats.kernels import AnswerGrid
from snapaudit.stats.normalize import normalizer
from snapaudit.stats.utility import GoldScores, gold_scores, utility_delta
from tests.stats._analysis_helpers import rows

# gold is "x" everywhere: "x" is an EM-match, "y" a nonmatch
TABLE = {
    "q1": {"A": ["x", "x"], "B": ["x", "y"]},   # MM, MN
    "q2": {"A": ["y", "y"], "B": ["x", "y"]},   # NM, NN
    "q3": {"A": ["x", "x"], "B": ["x", "x"]},   # MM, MM
    "q4": {"A": ["x", "y"], "B": ["y", "y"]},   # MN, NN
}
GOLD = {q: ("x",) for q in TABLE}


def _scores(table: dict[str, dict[str, list[str]]] = TABLE) -> GoldScores:
    grid = AnswerGrid.from_rows(rows(table))
    return gold_scores(grid, {q: ("x",) for q in table}, normalizer("nq"), "A", "B")


def test_flip_rates_hand_values() -> None:
    fr = flip_rates(_scores(), Resampling(), 2000, 0)
    # MM 3, MN 2, NM 1, NN 2 of 8 comparisons; EM_new = 4/8
    assert fr.counts == {"match_to_match": 3, "match_to_nonmatch": 2, "nonmatch_to_match": 1,
                         "nonmatch_to_nonmatch": 2}
    point = {k: v.point for k, v in fr.rates.items()}
    assert point == pytest.approx({"nfr": 25.0, "pfr": 12.5, "nfi": 25.0 / (100 - 50) * 100,
                                   "btc": 60.0, "bec": 50.0})
    assert fr.negative_question_ids == ("q1", "q4")
    for rate in fr.rates.values():
        assert rate.ci95 is not None and rate.ci95[0] <= rate.point <= rate.ci95[1]


def test_flip_rates_undefined_ratio_is_null() -> None:
    table = {"q1": {"A": ["y", "y"], "B": ["x", "y"]}, "q2": {"A": ["y", "y"], "B": ["y", "y"]}}
    fr = flip_rates(_scores(table), Resampling(), 500, 0)
    assert fr.rates["btc"].point is None and fr.rates["btc"].ci95 is None   # no old match
    assert fr.rates["nfr"].point == 0.0 and fr.rates["pfr"].point == 25.0
    assert fr.to_json()["btc"] == {"point": None, "ci95": None}


def _naive_rates(em_old: np.ndarray, em_new: np.ndarray) -> dict[str, float]:
    mm = mn = nm = nn = 0
    for a_row, b_row in zip(em_old, em_new, strict=True):
        for a, b in zip(a_row, b_row, strict=True):
            mm += bool(a and b)
            mn += bool(a and not b)
            nm += bool(not a and b)
            nn += bool(not a and not b)
    total = mm + mn + nm + nn
    em_new_pct = 100 * (mm + nm) / total
    nfr = 100 * mn / total
    return {"nfr": nfr, "pfr": 100 * nm / total, "nfi": 100 * nfr / (100 - em_new_pct),
            "btc": 100 * mm / (mm + mn), "bec": 100 * nn / (mn + nn)}


def test_flip_rates_differential_against_index_bootstrap() -> None:
    rng = np.random.default_rng(5)
    n, r = 300, 3
    em_old = (rng.random((n, r)) < 0.6).astype(float)
    em_new = np.where(rng.random((n, r)) < 0.8, em_old, 1 - em_old)
    scores = GoldScores(tuple(f"q{i:03d}" for i in range(n)), em_old, em_new, em_old, em_new)
    fr = flip_rates(scores, Resampling(), 20_000, 3)
    naive = _naive_rates(em_old, em_new)
    assert {k: v.point for k, v in fr.rates.items()} == pytest.approx(naive)
    # straightforward index bootstrap of the same rates
    draws = {k: [] for k in naive}  # type: dict[str, list[float]]
    for _ in range(4000):
        idx = rng.integers(0, n, n)
        for k, v in _naive_rates(em_old[idx], em_new[idx]).items():
            draws[k].append(v)
    for k, values in draws.items():
        lo, hi = np.percentile(values, [2.5, 97.5])
        ci = fr.rates[k].ci95
        assert ci is not None
        width = hi - lo
        assert abs(ci[0] - lo) < 0.08 * width and abs(ci[1] - hi) < 0.08 * width, k


def test_utility_delta_exact_bootstrap_distribution() -> None:
    # two questions with EM deltas -1/2 and +1/2: resampled mean is -1/2 (1/4), 0 (1/2),
    # +1/2 (1/4), so P(delta <= 0) = 3/4 and the 95% interval is [-50, 50] pp
    table = {"q1": {"A": ["x", "x"], "B": ["x", "y"]}, "q2": {"A": ["y", "y"], "B": ["x", "y"]}}
    out = utility_delta(_scores(table), Resampling(), 40_000, 1)
    assert out["em"].point == 0.0
    assert out["em"].p_nonpositive == pytest.approx(0.75, abs=0.01)
    assert out["em"].ci95 == (-50.0, 50.0)


def test_utility_delta_in_results_agrees_with_utility_and_naive_loop() -> None:
    res = analyze(rows(TABLE), config=AnalysisConfig(old="A", new="B", draws=5000, seed=2),
                  gold=GOLD).to_json()
    util = res["utility"]
    assert isinstance(util, dict)
    delta = util["delta"]
    # EM per question: A 1, 0, 1, .5 -> .625; B .5, .5, 1, 0 -> .5: delta -12.5 pp
    assert delta["em"]["point"] == util["em_delta"] == pytest.approx(-12.5)
    assert delta["f1"]["point"] == util["f1_delta"]
    lo, hi = delta["em"]["ci95"]
    assert lo <= -12.5 <= hi and 0 < delta["em"]["p_nonpositive"] <= 1
    fr = res["flip_rates"]
    assert isinstance(fr, dict) and fr["nfr"]["point"] == pytest.approx(25.0)
    assert fr["comparisons"] == 8 and fr["negative_question_ids"] == ["q1", "q4"]


def test_no_gold_no_flip_rates() -> None:
    res = analyze(rows(TABLE), config=AnalysisConfig(old="A", new="B", draws=500)).to_json()
    assert res["flip_rates"] is None and res["utility"] is None
