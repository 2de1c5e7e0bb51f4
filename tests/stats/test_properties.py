"""Invariants under hypothesis: relabelling states, permuting questions, any r >= 2."""

from __future__ import annotations

from itertools import combinations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from snapaudit.stats.bootstrap import whole_question_bootstrap
from snapaudit.stats.churn import per_question
from snapaudit.stats.flips import flip_ids
from snapaudit.stats.kernels import AnswerGrid, ExactKernel, SemanticKernel
from snapaudit.stats.normalize import normalize_nq
from snapaudit.tables import AnswerRef, PairLabel
from tests.stats._analysis_helpers import rows, unbiased_mmd2

Table = dict[str, dict[str, list[str]]]


@st.composite
def tables(draw: st.DrawFn, max_r: int = 4) -> Table:
    r = draw(st.integers(2, max_r))
    n = draw(st.integers(1, 8))
    ans = st.lists(st.sampled_from(["a", "b", "c", "The A"]), min_size=r, max_size=r)
    return {f"q{i}": {"L": draw(ans), "H": draw(ans)} for i in range(n)}


def _pq(table: Table, old: str = "L", new: str = "H") -> tuple[AnswerGrid, np.ndarray]:
    grid = AnswerGrid.from_rows(rows(table))
    pq = per_question(grid, ExactKernel(grid, normalize_nq), old, new)
    return grid, np.stack([pq.w, pq.c, pq.d])


FAST = settings(max_examples=60, deadline=None)


@FAST
@given(tables(), st.sampled_from([("zz", "aa"), ("new", "old"), ("H2", "L2")]))
def test_relabelling_states_changes_nothing(table: Table, names: tuple[str, str]) -> None:
    renamed = {q: {names[0]: s["L"], names[1]: s["H"]} for q, s in table.items()}
    _, a = _pq(table)
    _, b = _pq(renamed, names[0], names[1])
    np.testing.assert_array_equal(a, b)


@FAST
@given(tables())
def test_swapping_old_and_new_keeps_d_and_flips(table: Table) -> None:
    grid, a = _pq(table, "L", "H")
    _, b = _pq(table, "H", "L")
    np.testing.assert_array_equal(a, b)
    k = ExactKernel(grid, normalize_nq)
    assert flip_ids(k, grid, "L", "H") == flip_ids(k, grid, "H", "L")


@FAST
@given(tables(), st.randoms(use_true_random=False))
def test_permuting_questions(table: Table, rnd: object) -> None:
    ids = list(table)
    shuffled = ids[:]
    rnd.shuffle(shuffled)  # type: ignore[attr-defined]
    renamed = {new: table[old] for old, new in zip(ids, shuffled, strict=True)}
    _, a = _pq(table)
    _, b = _pq(renamed)
    order = [int(q[1:]) for q in shuffled]              # row i of `a` is q{i}, now q{order[i]}
    np.testing.assert_array_equal(a[:, np.argsort(order)], b)
    boot_a = whole_question_bootstrap(a[2], draws=300, seed=9)
    boot_b = whole_question_bootstrap(b[2], draws=300, seed=9)
    np.testing.assert_array_equal(boot_a.draws, boot_b.draws)


@FAST
@given(tables(max_r=6))
def test_any_r_bounds_and_mmd(table: Table) -> None:
    grid, (w, c, d) = _pq(table)
    assert ((w >= 0) & (w <= 1) & (c >= 0) & (c <= 1) & (d >= -1) & (d <= 1)).all()
    for i, q in enumerate(grid.question_ids):
        xs = [normalize_nq(a) for a in table[q]["L"]]
        ys = [normalize_nq(a) for a in table[q]["H"]]
        assert abs(2 * d[i] - unbiased_mmd2(xs, ys)) < 1e-12


@FAST
@given(tables())
def test_semantic_kernel_from_exact_labels_equals_exact(table: Table) -> None:
    grid = AnswerGrid.from_rows(rows(table))
    exact = ExactKernel(grid, normalize_nq)
    labels = []
    for q in grid.question_ids:
        refs = [AnswerRef(s, j) for s in ("H", "L") for j in range(1, grid.repeats + 1)]
        labels += [PairLabel(q, a, b, exact.same(q, a, b)) for a, b in combinations(refs, 2)]
    sem = per_question(grid, SemanticKernel(labels, "default"), "L", "H")
    ex = per_question(grid, exact, "L", "H")
    np.testing.assert_array_equal(sem.d, ex.d)
