"""The permutation test's distinct same/different patterns: packed rows, numpy's order."""

from __future__ import annotations

import numpy as np

from snapaudit.stats.permutation import distinct_patterns


def test_patterns_in_lexicographic_order_with_counts() -> None:
    bits = np.array([[1, 0, 1], [0, 1, 1], [1, 0, 1], [0, 0, 0]], dtype=bool)
    patterns, counts = distinct_patterns(bits)
    assert patterns.astype(int).tolist() == [[0, 0, 0], [0, 1, 1], [1, 0, 1]]
    assert counts.tolist() == [1, 1, 2]
    assert patterns.dtype == np.bool_


def test_patterns_match_numpy_unique_for_narrow_and_wide_rows() -> None:
    rng = np.random.default_rng(5)
    for width in (1, 45, 63, 64, 70):
        bits = rng.random((300, width)) < 0.2
        bits[7] = bits[3]
        patterns, counts = distinct_patterns(bits)
        ref, ref_counts = np.unique(bits, axis=0, return_counts=True)
        assert np.array_equal(patterns, ref) and np.array_equal(counts, ref_counts), width
