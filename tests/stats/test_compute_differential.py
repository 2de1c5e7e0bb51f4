"""The vectorized rewrites of the analysis give what the formulas they replaced give.

Each test keeps the replaced code as a reference, written out here, and compares on random
inputs built to reach every branch (duplicates, gaps, unsorted ids, both pair orders).
"""

from __future__ import annotations

import numpy as np
import pytest

from snapaudit.stats.agreement import per_question_counts
from snapaudit.tables import AnswerRef, LabelTable


def _reference_counts(t: LabelTable, a: str, b: str) -> np.ndarray:
    """per_question_counts before the count tables: sorted keys, intersect1d, bincount."""
    nr = max(1, len(t.refs))
    lo, hi = np.minimum(t.a, t.b), np.maximum(t.a, t.b)
    keys = (t.q.astype(np.int64) * nr + lo) * nr + hi

    def last(judge: str) -> tuple[np.ndarray, np.ndarray]:
        rows = np.flatnonzero(t.for_judge(judge))[::-1]
        uniq, first = np.unique(keys[rows], return_index=True)
        return uniq, t.same[rows[first]]

    (ka, xa), (kb, xb) = last(a), last(b)
    common, ia, ib = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
    sa, sb = xa[ia].astype(np.int64), xb[ib].astype(np.int64)
    if common.size == 0:
        return np.zeros((0, 5))
    q = common // (nr * nr)
    rank = np.empty(len(t.questions), dtype=np.int64)
    rank[sorted(range(len(t.questions)), key=t.questions.__getitem__)] = np.arange(
        len(t.questions))
    size = len(t.questions)
    cols = [np.bincount(rank[q], weights=w, minlength=size)
            for w in (np.ones(len(q)), (sa == sb).astype(np.float64), sa, sb)]
    out = np.column_stack([*cols, (cols[0] == cols[1]).astype(np.float64)])
    kept: np.ndarray = out[out[:, 0] > 0]
    return kept


def _random_table(rng: np.random.Generator, *, duplicates: bool, judges: int = 3
                  ) -> LabelTable:
    nq, r = int(rng.integers(1, 30)), int(rng.integers(2, 5))
    refs = [AnswerRef(s, j) for s in ("n0", "n1") for j in range(1, r + 1)]
    questions = [f"q{int(x):03d}" for x in rng.permutation(1000)[:nq]]  # not sorted
    q, a, b, same, judge = [], [], [], [], []
    for j in range(judges):
        for qi in range(nq):
            for x in range(len(refs)):
                for y in range(x + 1, len(refs)):
                    if rng.random() < 0.2:
                        continue  # a gap: this judge did not label the pair
                    lo, hi = (x, y) if rng.random() < 0.5 else (y, x)
                    copies = 2 if duplicates and rng.random() < 0.1 else 1
                    for _ in range(copies):
                        q.append(qi)
                        a.append(lo)
                        b.append(hi)
                        same.append(bool(rng.random() < 0.6))
                        judge.append(j)
    order = rng.permutation(len(q))  # file order is any order
    cols = [np.asarray(c)[order] for c in (q, a, b, same, judge)]
    return LabelTable(questions, refs, [f"j{j}" for j in range(judges)], *cols)


@pytest.mark.parametrize("duplicates", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_agreement_counts_equal_the_sorted_formula(seed: int, duplicates: bool) -> None:
    t = _random_table(np.random.default_rng(seed), duplicates=duplicates)
    for a, b in (("j0", "j1"), ("j2", "j0"), ("j1", "nobody")):
        got, want = per_question_counts(t, a, b), _reference_counts(t, a, b)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()
    if not duplicates:
        assert per_question_counts(t, "j0", "j1").shape[0] > 0  # the test compares rows


def _matrices(rng: np.random.Generator) -> list[np.ndarray]:
    n = int(rng.integers(1, 400))
    m = int(rng.integers(1, 6))
    grid = rng.integers(0, 4, size=(n, m)) / int(rng.integers(1, 6))  # few distinct rows
    ints = rng.integers(-3, 40, size=(n, m)).astype(np.float64)
    floats = rng.normal(size=(n, m))
    odd = grid.copy()
    odd[rng.integers(0, n), 0] = -0.0  # numpy.unique's own order decides these
    nan = floats.copy()
    nan[rng.integers(0, n), rng.integers(0, m)] = np.nan
    return [grid, ints, floats, odd, nan, -grid]


@pytest.mark.parametrize("seed", range(20))
def test_distinct_rows_equal_numpy_unique(seed: int) -> None:
    from snapaudit.stats.bootstrap import distinct_rows

    for v in _matrices(np.random.default_rng(seed)):
        uniq, inverse = distinct_rows(v)
        want, want_inverse = np.unique(v, axis=0, return_inverse=True)
        assert uniq.tobytes() == want.tobytes() and uniq.shape == want.shape
        assert inverse.tolist() == want_inverse.ravel().tolist()
        assert inverse.shape == (v.shape[0],)


@pytest.mark.parametrize("seed", range(20))
def test_count_product_equals_the_integer_by_float_product(seed: int) -> None:
    from snapaudit.stats.bootstrap import count_product, integer_sums

    rng = np.random.default_rng(seed)
    for v in _matrices(rng):
        n = v.shape[0]
        counts = rng.multinomial(n, np.full(n, 1.0 / n), size=50)
        exact = integer_sums(v, n)
        assert count_product(counts, v, exact).tobytes() == (counts @ v).tobytes()
        assert exact == (np.isfinite(v).all() and (v == np.rint(v)).all()
                         and not np.signbit(v[v == 0]).any())
    assert integer_sums(np.array([[1.0, 2.0]]), 10)  # the cast is taken where it can be
    assert not integer_sums(np.array([[0.5]]), 10)
    assert not integer_sums(np.array([[2.0 ** 40]]), 2 ** 14)  # sums past 2^53: as written
    assert not integer_sums(np.array([[-0.0, 1.0]]), 10)
