"""Corpus paths: per-path D, the path average, spread, path share, variance components and
the two-stage bootstrap, against hand-computed values."""

from __future__ import annotations

import numpy as np
import pytest

from snapaudit.stats.kernels import AnswerGrid, ExactKernel
from snapaudit.stats.normalize import normalizer
from snapaudit.stats.paths import components, path_step, paths_analysis, two_stage_draws
from snapaudit.tables import AnswerRow

# 3 questions x 2 paths (fractions); in pp: [[0, 50], [50, 100], [25, 75]]
D = np.array([[0.0, 0.5], [0.5, 1.0], [0.25, 0.75]])
STATES = [("n1", "n3"), ("p1.n1", "p1.n3")]


def test_step_summary_by_hand() -> None:
    s = path_step("n1->n3", STATES, D, draws=500, seed=0)
    assert s.per_path == (25.0, 75.0)
    assert s.d_mean == 50.0
    assert s.sd_between == pytest.approx(50 / 2 ** 0.5)  # sd of (25, 75), ddof 1
    assert s.range == (25.0, 75.0)
    # SS_total = 2*2500 + 2*625 = 6250; SS_path = 3 * (625 + 625) = 3750
    assert s.path_share == pytest.approx(0.6)
    assert s.ci95[0] <= s.lcb95 <= s.d_mean <= s.ci95[1]
    assert s.to_json()["per_path"][1] == {"path": 1, "old": "p1.n1", "new": "p1.n3",
                                          "d_hat": 75.0}


def test_components_by_hand() -> None:
    # additive table: residuals 0; MS_path = 3 * 1250 / 1, MS_question = 2 * 1250 / 2
    c = components(100 * D)
    assert c["residual_sd"] == pytest.approx(0.0, abs=1e-12)
    assert c["path_sd"] == pytest.approx((3750 / 3) ** 0.5)
    assert c["question_sd"] == pytest.approx((1250 / 2) ** 0.5)


def test_constant_table_has_no_spread() -> None:
    s = path_step("a->b", STATES, np.full((4, 2), 0.1), draws=200, seed=1)
    assert s.path_share == 0.0 and s.sd_between == 0.0
    assert s.ci95 == pytest.approx((10.0, 10.0))


def test_two_stage_draws_resample_paths_and_questions() -> None:
    # one question: only the paths vary, so each draw is the mean of 2 drawn paths
    one = two_stage_draws(np.array([[0.0, 1.0]]), 2000, seed=3)
    assert set(np.round(one, 9)) == {0.0, 0.5, 1.0}
    assert abs(float((one == 0.5).mean()) - 0.5) < 0.05  # P = 2 * 1/4
    # one path: only the questions vary
    q = two_stage_draws(np.array([[0.0], [1.0]]), 2000, seed=3)
    assert set(np.round(q, 9)) == {0.0, 0.5, 1.0}
    again = two_stage_draws(D, 300, seed=9)
    np.testing.assert_array_equal(again, two_stage_draws(D, 300, seed=9))  # seeded


def _rows() -> list[AnswerRow]:
    """q1 differs between old and new on path 0 only; q2 everywhere stable."""
    ans = {("q1", "n1"): ("a", "a"), ("q1", "n3"): ("b", "b"),
           ("q1", "p1.n1"): ("a", "a"), ("q1", "p1.n3"): ("a", "a")}
    rows = []
    for q in ("q1", "q2"):
        for s in ("n0", "n1", "n3", "p1.n1", "p1.n3"):
            for r, text in enumerate(ans.get((q, s), ("x", "x")), start=1):
                rows.append(AnswerRow(q, s, r, text))
    return rows


def test_paths_analysis_on_a_grid() -> None:
    grid = AnswerGrid.from_rows(_rows())
    res = paths_analysis(grid, {"exact": ExactKernel(grid, normalizer("nq"))},
                         [("n0", "n1", "n3"), ("n0", "p1.n1", "p1.n3")], "n1", "n3",
                         draws=200, seed=0)
    steps, ends = res.kernels["exact"]
    assert [s.step for s in steps] == ["n0->n1", "n1->n3"]
    # D_q1 = 1 on path 0 (w = 1, c = 0), 0 on path 1; q2: 0 -> per path 50 and 0 pp
    assert ends.per_path == (50.0, 0.0) and ends.d_mean == 25.0
    assert ends.states == (("n1", "n3"), ("p1.n1", "p1.n3"))
    doc = res.to_json()
    assert doc["count"] == 2 and doc["kernels"]["exact"]["endpoints"]["d_mean"] == 25.0


def test_paths_plan_by_hand() -> None:
    from snapaudit.stats.paths_plan import paths_need

    comps = {"path_sd": 2.0, "question_sd": 10.0, "residual_sd": 0.0}
    rows = paths_need(comps, [5.0], [1, 3], power=0.8)
    # z = z_0.8 + z_0.95 = 2.486475; (5 / z)^2 = 4.043634
    # K = 1: 100 / (4.043634 - 4) = 2291.8 -> 2292; K = 3: 100 / 2.710301 = 36.9 -> 37
    assert [(r.paths, r.questions) for r in rows] == [(1, 2292), (3, 37)]
    assert rows[0].min_paths == 1  # 4 z^2 / 25 = 0.989 < 1
    few = paths_need({"path_sd": 4.0, "question_sd": 10.0}, [5.0], [3, 4], power=0.8)
    # 16 z^2 / 25 = 3.957: 3 paths are never enough, 4 are
    assert few[0].questions is None and few[1].questions is not None
    assert few[0].min_paths == 4
