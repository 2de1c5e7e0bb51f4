"""stats.bootstrap.percentiles against numpy.percentile, bit for bit (the results JSON keeps
its bytes only if every interval bound is the same float)."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from snapaudit.stats.bootstrap import percentiles

LEVELS = (5.0, 2.5, 97.5, 0.0, 50.0, 100.0, 25.0, 75.0, 1.0, 99.0, 33.3, 66.7)


def _bits(values: list[float]) -> list[bytes]:
    return [struct.pack("<d", v) for v in values]


def _numpy(x: np.ndarray, levels: tuple[float, ...]) -> list[float]:
    return [float(v) for v in np.percentile(x, list(levels))]


def _samples(rng: np.random.Generator, n: int) -> list[np.ndarray]:
    grid = rng.choice(np.arange(-8, 9) / 4, size=n)  # heavy ties, as bootstrap means are
    return [grid, rng.normal(size=n), rng.normal(size=n) * 1e-300,
            rng.integers(-3, 4, size=n).astype(np.float64) * 0.1,
            np.where(rng.random(n) < 0.5, -0.0, 0.0), np.full(n, 0.7),
            np.cumsum(rng.random(n)) / 3]


def test_bit_identical_to_numpy_on_many_random_samples() -> None:
    rng = np.random.default_rng(2026)
    checked = 0
    for n in [*range(1, 120), 199, 200, 201, 999, 1000, 1001, 4097, 50_000]:
        for x in _samples(rng, n):
            for levels in (LEVELS, (5.0, 2.5, 97.5), (2.5,), (97.5,)):
                assert _bits(percentiles(x, levels)) == _bits(_numpy(x, levels)), (n, levels)
                checked += 1
    assert checked > 3000


def test_random_levels_and_sizes() -> None:
    rng = np.random.default_rng(7)
    for _ in range(2000):
        n = int(rng.integers(1, 300))
        x = rng.choice(rng.normal(size=int(rng.integers(1, 12))), size=n)
        levels = tuple(float(v) for v in rng.uniform(0, 100, size=3))
        assert _bits(percentiles(x, levels)) == _bits(_numpy(x, levels))


def test_input_left_untouched_and_nan_propagates() -> None:
    x = np.array([3.0, 1.0, 2.0])
    percentiles(x, (50.0,))
    assert x.tolist() == [3.0, 1.0, 2.0]
    got = percentiles(np.array([1.0, math.nan, 2.0]), (2.5, 97.5))
    assert all(math.isnan(v) for v in got)
    assert all(math.isnan(v) for v in _numpy(np.array([1.0, math.nan, 2.0]), (2.5, 97.5)))


def test_refuses_what_numpy_refuses_or_is_not_a_sample() -> None:
    with pytest.raises(ValueError, match="range"):
        percentiles(np.array([1.0]), (101.0,))
    with pytest.raises(ValueError, match="1-D"):
        percentiles(np.array([]), (5.0,))
    with pytest.raises(ValueError, match="1-D"):
        percentiles(np.zeros((2, 2)), (5.0,))
