"""Table-based replacements of sorts over label codes: the same answers as numpy's sorts."""

from __future__ import annotations

import numpy as np

from snapaudit.tables.labeltable import all_distinct, dense_unique, dense_unique_of


def test_dense_unique_gives_sorted_values_and_inverse() -> None:
    values, inverse = dense_unique(np.array([7, 2, 7, 0, 2], dtype=np.int64))
    assert values.tolist() == [0, 2, 7]
    assert inverse.tolist() == [2, 1, 2, 0, 1]
    assert values.dtype == np.int64


def test_dense_unique_matches_numpy_on_random_codes() -> None:
    rng = np.random.default_rng(3)
    codes = rng.integers(0, 40, 5_000)
    values, inverse = dense_unique(codes)
    ref_values, ref_inverse = np.unique(codes, return_inverse=True)
    assert np.array_equal(values, ref_values) and np.array_equal(inverse, ref_inverse)


def test_dense_unique_of_nothing() -> None:
    values, inverse = dense_unique(np.zeros(0, dtype=np.int64))
    assert values.size == 0 and inverse.size == 0


def test_all_distinct_finds_a_repeated_key() -> None:
    assert all_distinct(np.array([3, 0, 5]), 6)
    assert not all_distinct(np.array([3, 0, 3]), 6)
    assert all_distinct(np.array([4]), 5)
    # a space too large for a table falls back to sorting, with the same answers
    assert all_distinct(np.array([1, 1 << 40]), 1 << 41)
    assert not all_distinct(np.array([1 << 40, 1 << 40]), 1 << 41)


def test_dense_unique_of_several_arrays_splits_the_inverse_back() -> None:
    a, b = np.array([5, 1, 5, 0], dtype=np.int32), np.array([1, 9], dtype=np.int32)
    values, (ia, ib) = dense_unique_of([a, b])
    assert values.tolist() == [0, 1, 5, 9] and values.dtype == np.int32
    assert ia.tolist() == [2, 1, 2, 0] and ib.tolist() == [1, 3]
    # a space too large for a table: the sort, with the same answers
    values, (ia, ib) = dense_unique_of([a, b], 1 << 40)
    assert values.tolist() == [0, 1, 5, 9] and ia.tolist() == [2, 1, 2, 0] and ib.tolist() == [1, 3]
