"""Flips, transitions, overlap with Fisher tests, ladder classes, judge agreement, gate."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import fisher_exact

from snapaudit.stats.agreement import agreement, kappa_from_totals, per_question_counts
from snapaudit.stats.churn import per_question
from snapaudit.stats.flips import flips
from snapaudit.stats.gate import GateConfig, GateRule, evaluate
from snapaudit.stats.kernels import AnswerGrid, ExactKernel, SemanticKernel
from snapaudit.stats.ladder import ladder
from snapaudit.stats.normalize import normalize_nq
from snapaudit.stats.overlap import fisher_exact as own_fisher
from snapaudit.stats.overlap import overlap
from snapaudit.stats.transitions import transitions
from snapaudit.tables import AnswerRef, AnswerRow, PairLabel
from tests.stats._analysis_helpers import labels_from_groups, rows


def _grid(table: dict[str, dict[str, list[str]]]) -> tuple[AnswerGrid, ExactKernel]:
    grid = AnswerGrid.from_rows(rows(table))
    return grid, ExactKernel(grid, normalize_nq)


def test_flips_and_decomposition() -> None:
    grid, k = _grid({
        "f1": {"A": ["x", "x"], "B": ["y", "y"]},   # flip, D = 1
        "f2": {"A": ["p", "p"], "B": ["q", "q"]},   # flip, D = 1
        "n1": {"A": ["x", "y"], "B": ["z", "z"]},   # not stable in A, D = 1/2
        "n2": {"A": ["x", "x"], "B": ["x", "y"]},   # D = 0
    })
    pq = per_question(grid, k, "A", "B")
    f = flips(k, grid, "A", "B", pq)
    assert f.question_ids == ("f1", "f2") and f.count == 2
    assert f.contribution_pp == pytest.approx(50.0)      # (1 + 1) / 4
    assert f.rest_pp == pytest.approx(12.5)              # 0.5 / 4
    assert f.contribution_pp + f.rest_pp == pytest.approx(100 * pq.d_hat)


def test_transitions_both_variants() -> None:
    table = {
        "q1": {"A": ["Paris", "Paris"], "B": ["Paris", "Lyon"]},       # m->m, m->n
        "q2": {"A": ["Milan", "Turin"], "B": ["Rome", "Turin city"]},  # n->m, n->n
        "q3": {"A": ["Bonn", "Bonn"], "B": ["bonn", "Koln"]},          # n->same, n->diff
    }
    gold = {"q1": ("Paris",), "q2": ("Rome",), "q3": ("Berlin",)}
    grid, exact = _grid(table)
    t = transitions(grid, gold, normalize_nq, exact, "A", "B")
    assert t.comparisons == 6
    assert t.counts == {"match_to_match": 1, "match_to_nonmatch": 1, "nonmatch_to_match": 1,
                        "nonmatch_to_same_nonmatch": 1, "nonmatch_to_different_nonmatch": 2}
    assert t.percent()["nonmatch_to_different_nonmatch"] == pytest.approx(100 / 3)
    # the semantic judge says 'Turin' and 'Turin city' are the same fact
    labels = [lab for q in table for lab in labels_from_groups(
        q, {"A1": "a", "A2": "b", "B1": "c", "B2": "b" if q == "q2" else "d"})]
    sem = transitions(grid, gold, normalize_nq, SemanticKernel(labels, "default"), "A", "B")
    assert sem.counts["nonmatch_to_same_nonmatch"] == 1        # q2 repeat 2
    assert sem.counts["nonmatch_to_different_nonmatch"] == 2   # q3 repeats 1 and 2 (labels)


def test_overlap_and_fisher() -> None:
    docs = {"q1": (("a", "b", "c"), ("a", "b", "c")),   # identical, shared 3
            "q2": (("a", "b", "c"), ("d", "e", "f")),   # shared 0
            "q3": (("a", "b", "c"), ("c", "b", "x")),   # shared 2
            "q4": (("a", "b", "c"), ("x", "y", "z"))}   # shared 0
    rws = [AnswerRow(q, s, j, "x", docs[q][si]) for q in docs for si, s in enumerate("AB")
           for j in (1, 2)]
    grid = AnswerGrid.from_rows(rws)
    o = overlap(grid, "A", "B", ["q2", "q4"])
    assert o.k == 3 and o.identical == 1
    assert o.mean == pytest.approx((1 + 0 + 2 / 3 + 0) / 4)
    assert o.zero_rate == 50.0
    assert dict(o.histogram) == {0: 2, 2: 1, 3: 1}
    assert o.flips_mean == 0.0
    assert o.rest_mean == pytest.approx(5 / 6)
    zero = o.fisher[0]
    assert (zero.shared, zero.flips_in_bin, zero.rest_in_bin) == (0, 2, 0)
    assert zero.p_value == pytest.approx(fisher_exact([[2, 0], [0, 2]])[1])   # = 1/3
    assert zero.p_value == pytest.approx(1 / 3)
    assert zero.odds_ratio is None                                         # infinite


def test_ladder_classes_and_returns() -> None:
    groups = {  # facts per (state, repeat): X->Y flip between n1 and n7
        "old": {"n0": "XX", "n1": "XX", "n3": "XX", "n7": "YY"},    # middle aligns with old
        "new": {"n0": "ZZ", "n1": "XX", "n3": "YY", "n7": "YY"},    # aligns with new; n0 other
        "third": {"n0": "XY", "n1": "XX", "n3": "ZZ", "n7": "YY"},  # stable third; n0 unstable
        "wob": {"n0": "YY", "n1": "XX", "n3": "XZ", "n7": "YY"},    # disagrees; n0 aligns new
        "ret": {"n0": "XX", "n1": "XX", "n3": "YY", "n7": "XX"},    # X->Y->X, no endpoint flip
    }
    table = {q: {s: [f"{f}{q}" for f in facts] for s, facts in g.items()}
             for q, g in groups.items()}
    grid, k = _grid(table)
    lad = ladder(k, grid, ("n0", "n1", "n3", "n7"), "n1", "n7")
    assert lad.endpoints.flip_ids == ("new", "old", "third", "wob")
    assert dict(lad.middle["n3"]) == {"aligns_old": 1, "aligns_new": 1, "stable_third": 1,
                                      "disagrees": 1, "mixed": 0}
    assert lad.returns["n1->n3->n7"] == ("ret",)
    assert lad.returns["n0->n1->n3"] == ()
    assert dict(lad.first_state or {}) == {"aligns_old": 1, "aligns_new": 1,
                                           "stable_other": 1, "unstable": 1}
    # n0->n1: new, wob; n1->n3: new, third, ret; n3->n7: old, third, ret
    assert [s.flips for s in lad.steps] == [2, 3, 3]
    assert lad.endpoints.d_hat == pytest.approx(100 * 4 / 5)


def test_kappa_by_hand() -> None:
    # 10 pairs on 2 questions: j1 says same on 6, j2 on 5; they agree on 7 (q1: all 5, q2: 2).
    # po = .7, pA = .6, pB = .5, pe = .3 + .2 = .5, kappa = (.7 - .5) / .5 = .4
    a = [1, 1, 1, 1, 0, 1, 1, 0, 0, 0]
    b = [1, 1, 1, 1, 0, 0, 0, 1, 0, 0]
    labels = []
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        q = "q1" if i < 5 else "q2"
        ra, rb = AnswerRef("A", 1), AnswerRef("B", i + 1)
        labels += [PairLabel(q, ra, rb, bool(x), "j1"), PairLabel(q, ra, rb, bool(y), "j2")]
    counts = per_question_counts(labels, "j1", "j2")
    assert counts.tolist() == [[5, 5, 4, 4, 1], [5, 2, 2, 1, 0]]
    assert float(kappa_from_totals(counts.sum(axis=0))) == pytest.approx(0.4)
    res = agreement(labels, "j1", "j2", {"j1": None, "j2": None}, draws=2000, seed=0)
    assert res is not None
    assert res.agreement == pytest.approx(70.0) and res.kappa == pytest.approx(0.4)
    assert res.partitions_identical == 50.0
    assert res.agreement_ci95[0] <= 70.0 <= res.agreement_ci95[1]
    assert np.isclose(res.pairs, 10)


def test_gate_rules() -> None:
    stats = {"exact": {"d_hat": 3.0, "lcb95": 0.5}, "semantic": {"d_hat": 5.0, "lcb95": 0.1}}
    assert evaluate(GateConfig(), stats).passed
    assert not evaluate(GateConfig(), {**stats, "exact": {"d_hat": 2.99, "lcb95": 1.0}}).passed
    no_sem = evaluate(GateConfig(), {"exact": stats["exact"]})
    assert not no_sem.passed
    assert no_sem.rules[2].value is None and "no pair labels" in (no_sem.rules[2].note or "")
    custom = GateConfig(rules=(GateRule(kernel="exact", statistic="lcb95", op=">",
                                        threshold=0.0),))
    assert evaluate(custom, {"exact": stats["exact"]}).passed
    assert not evaluate(custom, {"exact": {"d_hat": 1.0, "lcb95": 0.0}}).passed


def test_own_fisher_matches_scipy() -> None:
    for a, b, c, d in [(3, 1, 1, 3), (0, 5, 2, 7), (10, 2, 3, 15), (1, 0, 0, 1), (0, 0, 4, 6),
                       (7, 40, 60, 293), (2, 48, 13, 177)]:
        odds, p = own_fisher(a, b, c, d)
        ref = fisher_exact([[a, b], [c, d]])
        assert p == pytest.approx(float(ref[1]), rel=1e-9)
        ref_odds = float(ref[0])
        assert odds == (pytest.approx(ref_odds) if np.isfinite(ref_odds) else None)
