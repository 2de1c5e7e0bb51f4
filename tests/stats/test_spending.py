"""Group-sequential boundaries against published values and a Monte Carlo of the null."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.special import ndtr

from snapaudit.stats.spending import boundaries, nominal_levels, obf_spending


def test_lan_demets_obrien_fleming_matches_published_boundaries() -> None:
    # Lan-DeMets O'Brien-Fleming-type spending, one-sided 0.025, 5 equally spaced looks:
    # the published values (e.g. R gsDesign, sfLDOF) 4.8769 3.3570 2.6803 2.2898 2.0310
    got = boundaries([0.2, 0.4, 0.6, 0.8, 1.0], 0.025)
    assert [round(c, 4) for c in got] == [4.8769, 3.3570, 2.6803, 2.2898, 2.0310]
    assert [round(c, 4) for c in boundaries([0.5, 1.0], 0.025)] == [2.9626, 1.9686]


def test_two_looks_against_the_bivariate_normal() -> None:
    # differential: P(Z1 < c1, Z2 >= c2) from scipy's bivariate normal CDF (corr sqrt(t1/t2))
    from scipy.stats import multivariate_normal

    t = (0.3, 1.0)
    c1, c2 = boundaries(t, 0.05)
    r = math.sqrt(t[0] / t[1])
    both_below = multivariate_normal(mean=[0, 0], cov=[[1, r], [r, 1]]).cdf([c1, c2])
    spent_at_2 = float(ndtr(c1)) - float(both_below)
    assert spent_at_2 == pytest.approx(obf_spending(1.0, 0.05) - obf_spending(0.3, 0.05),
                                       abs=2e-6)


def test_one_look_is_the_fixed_design() -> None:
    (c,) = boundaries([1.0], 0.05)
    assert c == pytest.approx(1.6448536, abs=1e-6)
    assert nominal_levels([1.0], 0.05) == pytest.approx((0.05,))
    assert obf_spending(1.0, 0.05) == pytest.approx(0.05)
    assert obf_spending(0.0, 0.05) == 0.0


def test_the_null_crosses_some_boundary_with_probability_alpha() -> None:
    # Brownian motion at 8 unequal looks; 400,000 seeded paths: P(cross) = 0.05 +- 3 SE
    t = np.array([0.1, 0.2, 0.35, 0.5, 0.6, 0.75, 0.9, 1.0])
    c = np.array(boundaries(t, 0.05))
    rng = np.random.default_rng(20261204)
    steps = rng.standard_normal((400_000, t.size)) * np.sqrt(np.diff(t, prepend=0.0))
    z = np.cumsum(steps, axis=1) / np.sqrt(t)
    crossed = float((z >= c).any(axis=1).mean())
    assert abs(crossed - 0.05) < 3 * math.sqrt(0.05 * 0.95 / 400_000)
    # and each look spends what the spending function says (first look: exactly)
    assert 1 - ndtr(c[0]) == pytest.approx(obf_spending(0.1, 0.05), rel=1e-9)


def test_fractions_must_increase_within_zero_one() -> None:
    for bad in ([], [0.5, 0.5], [0.0, 1.0], [0.5, 1.2]):
        with pytest.raises(ValueError, match="fractions must increase"):
            boundaries(bad, 0.05)
