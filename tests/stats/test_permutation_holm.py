"""The stratified permutation test (MMD^2) and Holm across the ladder."""

from __future__ import annotations

import random
from itertools import combinations, product

import numpy as np
import pytest

from snapaudit.stats.analysis import AnalysisConfig, analyze
from snapaudit.stats.cluster import Resampling
from snapaudit.stats.kernels import AnswerGrid, ExactKernel
from snapaudit.stats.multiplicity import holm, ladder_family, ladder_holm
from snapaudit.stats.normalize import normalizer
from snapaudit.stats.permutation import (
    codes_to_bits,
    permutation_test,
    same_matrices,
    split_values,
)
from tests.stats._analysis_helpers import rows, unbiased_mmd2


def _d(a: list[str], b: list[str]) -> float:
    r = len(a)
    pa = [x == y for i, x in enumerate(a) for y in a[i + 1:]]
    pb = [x == y for i, x in enumerate(b) for y in b[i + 1:]]
    return (sum(pa) / len(pa) + sum(pb) / len(pb)) / 2 - sum(x == y for x in a for y in b) / r**2


def _exhaustive_p(questions: list[tuple[list[str], list[str]]]) -> float:
    """Exact permutation p-value: every product of every question's relabelling."""
    per_q = []
    for a, b in questions:
        pool, r = [*a, *b], len(a)
        per_q.append([_d([pool[i] for i in s], [pool[i] for i in range(2 * r) if i not in s])
                      for s in combinations(range(2 * r), r)])
    obs = sum(_d(a, b) for a, b in questions)
    totals = [sum(c) for c in product(*per_q)]
    return sum(t >= obs - 1e-9 for t in totals) / len(totals)


def _naive_shuffle_p(questions: list[tuple[list[str], list[str]]], b: int, seed: int) -> float:
    rnd = random.Random(seed)
    obs = sum(_d(x, y) for x, y in questions)
    hits = 0
    for _ in range(b):
        t = 0.0
        for x, y in questions:
            pool = [*x, *y]
            rnd.shuffle(pool)
            t += _d(pool[:len(x)], pool[len(x):])
        hits += t >= obs - 1e-9
    return (1 + hits) / (1 + b)


def _bits(questions: list[tuple[list[str], list[str]]]) -> np.ndarray:
    codes = {}  # type: dict[str, int]
    old = np.array([[codes.setdefault(x, len(codes)) for x in a] for a, _ in questions])
    new = np.array([[codes.setdefault(x, len(codes)) for x in b] for _, b in questions])
    return codes_to_bits(old, new)


def test_split_values_hand_computed() -> None:
    # old [a, a], new [b, b]: the observed split has D = 1; the 4 mixed splits have
    # within 0 and cross 1/2 (D = -1/2); the swapped split has D = 1 again
    bits = _bits([(["a", "a"], ["b", "b"])])
    splits = np.array(list(combinations(range(4), 2)))
    assert split_values(bits, 2, splits)[0].tolist() == [1.0, -0.5, -0.5, -0.5, -0.5, 1.0]


def test_single_flip_has_p_one_third_and_two_flips_one_ninth() -> None:
    one = permutation_test(_bits([(["a", "a"], ["b", "b"])]), 2, 30_000, 0)
    assert one.p_value == pytest.approx(1 / 3, abs=0.01)
    assert one.mmd2 == pytest.approx(2.0)              # MMD^2_u = 2 D_i = 2
    two = permutation_test(_bits([(["a", "a"], ["b", "b"])] * 2), 2, 30_000, 0)
    assert two.p_value == pytest.approx(1 / 9, abs=0.006)


def test_constant_questions_do_not_move_the_null() -> None:
    same = permutation_test(_bits([(["a", "a"], ["a", "a"])] * 5), 2, 1000, 0)
    assert same.p_value == 1.0 and same.mmd2 == 0.0


@pytest.mark.parametrize("r", [2, 3])
def test_agrees_with_exhaustive_and_naive_shuffle(r: int) -> None:
    rnd = random.Random(r)
    questions = [([rnd.choice("abc") for _ in range(r)], [rnd.choice("abd") for _ in range(r)])
                 for _ in range(3)]
    exact = _exhaustive_p(questions)
    fast = permutation_test(_bits(questions), r, 40_000, 4).p_value
    naive = _naive_shuffle_p(questions, 4000, 4)
    assert fast == pytest.approx(exact, abs=0.01)
    assert naive == pytest.approx(exact, abs=0.03)


def test_mmd2_is_mean_unbiased_mmd2_and_bits_match_kernel() -> None:
    table = {"q1": {"A": ["x", "y", "x"], "B": ["y", "y", "z"]},
             "q2": {"A": ["p", "p", "p"], "B": ["p", "q", "p"]}}
    grid = AnswerGrid.from_rows(rows(table))
    bits = same_matrices(ExactKernel(grid, normalizer("nq")), grid, "A", "B")
    assert bits.tolist() == _bits([(t["A"], t["B"]) for t in table.values()]).tolist()
    res = permutation_test(bits, 3, 200, 0)
    want = np.mean([unbiased_mmd2(t["A"], t["B"]) for t in table.values()])
    assert res.mmd2 == pytest.approx(want)


def test_seeded_and_in_results() -> None:
    bits = _bits([(["a", "b"], ["b", "c"]), (["a", "a"], ["a", "b"])] * 10)
    assert permutation_test(bits, 2, 500, 7) == permutation_test(bits, 2, 500, 7)
    table = {"q1": {"A": ["x", "x"], "B": ["y", "y"]}, "q2": {"A": ["u", "v"], "B": ["u", "w"]}}
    doc = analyze(rows(table), config=AnalysisConfig(old="A", new="B", draws=200,
                                                     permutations=999)).to_json()
    dist = doc["distribution_test"]
    assert isinstance(dist, dict) and dist["permutations"] == 999
    assert dist["exact"]["p_value"] == permutation_test(
        _bits([(["x", "x"], ["y", "y"]), (["u", "v"], ["u", "w"])]), 2, 999, 0).p_value
    off = analyze(rows(table), config=AnalysisConfig(old="A", new="B", draws=200,
                                                     permutations=0)).to_json()
    assert off["distribution_test"] is None


def test_holm_hand_values_and_naive() -> None:
    p = [0.01, 0.04, 0.03, 0.005]
    # sorted .005 (x4 = .02), .01 (x3 = .03), .03 (x2 = .06), .04 (x1 = .04 -> .06)
    assert holm(p) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    rnd = random.Random(1)
    for _ in range(50):
        q = [rnd.random() ** 3 for _ in range(rnd.randint(1, 7))]
        order = sorted(range(len(q)), key=lambda i: q[i])
        naive = [0.0] * len(q)
        running = 0.0
        for rank, i in enumerate(order):
            running = max(running, min(1.0, (len(q) - rank) * q[i]))
            naive[i] = running
        assert holm(q) == pytest.approx(naive)


def test_ladder_family_and_holm_in_results() -> None:
    assert ladder_family(["a", "b", "c"], "a", "c") == [("a", "b", "step"), ("b", "c", "step"),
                                                        ("a", "c", "endpoints")]
    assert ladder_family(["a", "b", "c"], "b", "c") == [("a", "b", "step"), ("b", "c", "step")]
    table = {f"q{i}": {"A": ["x", "x"], "B": ["x", "x"] if i % 3 else ["y", "y"],
                       "C": ["z", "z"] if i % 2 else ["x", "x"]} for i in range(12)}
    grid = AnswerGrid.from_rows(rows(table))
    kernel = ExactKernel(grid, normalizer("nq"))
    m = ladder_holm(kernel, grid, ["A", "B", "C"], "A", "C", Resampling(), 4000, 0)
    doc = analyze(rows(table), config=AnalysisConfig(old="A", new="C", ladder=("A", "B", "C"),
                                                     draws=4000, permutations=0)).to_json()
    assert doc["multiplicity"] == m.to_json()
    tests = m.to_json()["tests"]
    assert [(t["old"], t["new"], t["kind"]) for t in tests] == [  # type: ignore[index]
        ("A", "B", "step"), ("B", "C", "step"), ("A", "C", "endpoints")]
    p = [t["p_nonpositive"] for t in tests]  # type: ignore[index]
    assert [t["p_holm"] for t in tests] == pytest.approx(holm(p))  # type: ignore[index]
    assert m.to_json()["role"] == "secondary"


def test_semantic_bits_are_the_labels_and_a_missing_label_is_named() -> None:
    from snapaudit.errors import InputError
    from snapaudit.stats.kernels import SemanticKernel
    from tests.stats._analysis_helpers import labels_from_groups

    table = {"q": {"A": ["one", "uno"], "B": ["1", "ein"]}}
    grid = AnswerGrid.from_rows(rows(table))
    # A1~A2, B1~B2 same, A1~B1 same (non-transitive on purpose), the other cross pairs not
    labels = labels_from_groups("q", {"A1": "f", "A2": "f", "B1": "g", "B2": "g"},
                                override={("A1", "B1"): True})
    bits = same_matrices(SemanticKernel(labels, "default"), grid, "A", "B")
    # pairs (A1,A2) (A1,B1) (A1,B2) (A2,B1) (A2,B2) (B1,B2)
    assert bits.tolist() == [[True, True, False, False, False, True]]
    partial = labels_from_groups("q", {"A1": "f", "A2": "f", "B1": "g"})
    # the first missing pair in the matrix's order, as the pair-by-pair walk named it
    with pytest.raises(InputError, match=r"missing pair label .*'q': A/1 vs B/2"):
        same_matrices(SemanticKernel(partial, "default"), grid, "A", "B")
