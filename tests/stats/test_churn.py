"""Within, cross and D against hand-computed values; the MMD identity; semantic kernel."""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest

from snapaudit.errors import InputError
from snapaudit.stats.churn import per_question
from snapaudit.stats.kernels import AnswerGrid, ExactKernel, SemanticKernel, nontransitive_triangles
from snapaudit.stats.normalize import normalize_nq
from tests.stats._analysis_helpers import labels_from_groups, rows, unbiased_mmd2

TINY = {
    "q1": {"A": ["x", "x"], "B": ["x", "y"]},   # w = (1 + 0)/2, c = 2/4   -> D = 0
    "q2": {"A": ["x", "y"], "B": ["z", "z"]},   # w = (0 + 1)/2, c = 0     -> D = 1/2
    "q3": {"A": ["p", "p"], "B": ["q", "q"]},   # w = 1,         c = 0     -> D = 1
}


def _exact(table: dict[str, dict[str, list[str]]]) -> tuple[AnswerGrid, ExactKernel]:
    grid = AnswerGrid.from_rows(rows(table))
    return grid, ExactKernel(grid, normalize_nq)


def test_tiny_table_r2_by_hand() -> None:
    grid, k = _exact(TINY)
    pq = per_question(grid, k, "A", "B")
    assert pq.question_ids == ("q1", "q2", "q3")
    assert pq.w.tolist() == [0.5, 0.5, 1.0]
    assert pq.c.tolist() == [0.5, 0.0, 0.0]
    assert pq.d.tolist() == [0.0, 0.5, 1.0]
    assert pq.within == pytest.approx(2 / 3)
    assert pq.cross == pytest.approx(1 / 6)
    assert pq.d_hat == pytest.approx(0.5)


def test_r3_by_hand() -> None:
    # within_A: (x,x)=1 (x,y)=0 (x,y)=0 -> 1/3; within_B: (x,y)=0 (x,y)=0 (y,y)=1 -> 1/3
    # cross: x vs (x,y,y) = 1,0,0 twice; y vs (x,y,y) = 0,1,1 -> 4/9; D = 1/3 - 4/9 = -1/9
    grid, k = _exact({"q": {"A": ["x", "x", "y"], "B": ["x", "y", "y"]}})
    pq = per_question(grid, k, "A", "B")
    assert pq.w[0] == pytest.approx(1 / 3)
    assert pq.c[0] == pytest.approx(4 / 9)
    assert pq.d[0] == pytest.approx(-1 / 9)


def test_exact_kernel_normalizes() -> None:
    grid, k = _exact({"q": {"A": ["The Beatles!", "beatles"], "B": ["  BEATLES ", "a Beatles"]}})
    pq = per_question(grid, k, "A", "B")
    assert (pq.w[0], pq.c[0]) == (1.0, 1.0)


@pytest.mark.parametrize("r", [2, 3, 4])
def test_two_d_is_unbiased_mmd(r: int) -> None:
    alphabet = ["a", "b", "c"]
    table = {}
    for i, combo in enumerate(product(alphabet, repeat=2 * r)):
        if i % 7 == 0:
            table[f"q{i:05d}"] = {"L": list(combo[:r]), "H": list(combo[r:])}
    grid, k = _exact(table)
    pq = per_question(grid, k, "L", "H")
    expected = [unbiased_mmd2(table[q]["L"], table[q]["H"]) for q in grid.question_ids]
    np.testing.assert_allclose(2 * pq.d, expected, atol=1e-12)


def test_semantic_kernel_nontransitive_labels_kept() -> None:
    # A1~A2, B1~B2, A1~B1 same; A1~B2, A2~B1, A2~B2 different (non-transitive on purpose).
    table = {"q": {"A": ["one", "uno"], "B": ["1", "ein"]}}
    labels = labels_from_groups("q", {"A1": "f", "A2": "f", "B1": "g", "B2": "g"},
                                override={("A1", "B1"): True})
    grid = AnswerGrid.from_rows(rows(table))
    k = SemanticKernel(labels, "default")
    pq = per_question(grid, k, "A", "B")
    assert (pq.w[0], pq.c[0], pq.d[0]) == (1.0, 0.25, 0.75)
    # (A1,A2,B1): 1,0,1 and (A1,B1,B2): 1,1,0 are the two non-transitive triangles
    assert nontransitive_triangles(k, grid, "q", ("A", "B")) == 2


def test_semantic_kernel_missing_pair_is_an_error() -> None:
    table = {"q": {"A": ["one", "uno"], "B": ["1", "ein"]}}
    labels = labels_from_groups("q", {"A1": "f", "A2": "f", "B1": "g"})
    grid = AnswerGrid.from_rows(rows(table))
    with pytest.raises(InputError, match=r"missing pair label .*B/1 vs B/2"):
        per_question(grid, SemanticKernel(labels, "default"), "A", "B")


def test_unknown_state_is_an_error() -> None:
    grid, k = _exact(TINY)
    with pytest.raises(InputError, match="unknown state"):
        per_question(grid, k, "A", "C")
