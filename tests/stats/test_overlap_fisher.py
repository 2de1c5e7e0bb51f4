"""Overlap's Fisher exact test against the big-integer binomial expressions it replaced."""

from __future__ import annotations

import math

import numpy as np
import pytest

from snapaudit.stats.overlap import fisher_exact


def _big_integer_fisher(a: int, b: int, c: int, d: int) -> tuple[float | None, float]:
    """The former implementation: exact binomials with math.comb."""
    row1, col1, total = a + b, a + c, a + b + c + d
    lo, hi = max(0, col1 - (total - row1)), min(row1, col1)
    denom = math.comb(total, col1)
    probs = {x: math.comb(row1, x) * math.comb(total - row1, col1 - x) / denom
             for x in range(lo, hi + 1)}
    observed = probs[a]
    p = min(1.0, sum(q for q in probs.values() if q <= observed * (1 + 1e-7)))
    return (a * d / (b * c) if b * c else None), p


def _tables() -> list[tuple[int, int, int, int]]:
    rng = np.random.default_rng(0)
    out = [(0, 0, 0, 0), (1, 0, 0, 0), (0, 5, 0, 7), (3, 0, 0, 4), (2, 3, 4, 1), (10, 0, 0, 10),
           (0, 40, 300, 0), (12, 388, 600, 9000)]
    for _ in range(60):
        scale = int(rng.choice([5, 50, 400, 1000]))
        out.append(tuple(int(v) for v in rng.integers(0, scale, size=4)))  # type: ignore[arg-type]
    for _ in range(30):  # near independence: moderate p-values at a few thousand questions
        flips, rest = int(rng.integers(20, 400)), int(rng.integers(500, 3000))
        share = float(rng.uniform(0.05, 0.6))
        a, c = int(rng.binomial(flips, share)), int(rng.binomial(rest, share))
        out.append((a, flips - a, c, rest - c))
    return out


@pytest.mark.parametrize("table", _tables())
def test_same_p_values_as_the_big_integer_binomials(table: tuple[int, int, int, int]) -> None:
    odds, p = fisher_exact(*table)
    ref_odds, ref_p = _big_integer_fisher(*table)
    assert odds == ref_odds
    if ref_p > 1e-250:
        assert p == pytest.approx(ref_p, rel=1e-12, abs=0)
    else:
        assert p < 1e-240
