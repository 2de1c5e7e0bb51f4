"""Group-sequential boundaries: alpha spent over planned looks (Lan & DeMets 1983).

An audit that looks at its data K times and stops at the first decisive look must hold its
error over every look. With Z_k the standardized estimate at look k (information fraction
t_k, the share of the planned questions used), the canonical joint distribution of
Z_1..Z_K (Jennison & Turnbull 2000, ch. 3) is that of a Brownian motion: S_k = Z_k sqrt(t_k)
has independent normal increments of variance t_k - t_{k-1}. A one-sided boundary
c_1..c_K spends alpha by a spending function a(t): under the null,

    P(Z_1 < c_1, ..., Z_{k-1} < c_{k-1}, Z_k >= c_k) = a(t_k) - a(t_{k-1}),

so P(some Z_k >= c_k) = a(t_K) = alpha when the last look has t_K = 1. The spending
function is the O'Brien-Fleming type, a(t) = 2 - 2 Phi(z_{1-alpha/2} / sqrt(t)): almost
nothing is spent on early looks (few questions, where a bootstrap bound is least reliable),
and the last look's boundary stays close to the fixed design's z_{1-alpha}
(docs/analysis.md, "Sequential looks", says why this one). Because each c_k depends only
on t_1..t_k, a look needs no knowledge of the looks after it.

:func:`boundaries` solves the recursion numerically (Armitage, McPherson & Rowe 1969): the
sub-density of S_k on the continuation region is carried on a grid of ``GRID`` points
(composite Simpson weights) and convolved with the normal increment; each c_k is the root
of the crossing probability minus the alpha to spend (Brent's method, scipy). The results
agree with published tables to four decimals (tests/stats/test_spending.py).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np
from scipy.optimize import brentq
from scipy.special import ndtr, ndtri

GRID = 301  # odd: Simpson's rule (201 already agrees with 801 to 5 decimals)
_LOW_SD = 9.0  # the grid starts this many SDs below 0 (mass below it < 1e-18)
_NEVER = math.inf  # a boundary where no alpha is left to spend


def obf_spending(t: float, alpha: float) -> float:
    """Alpha spent by information fraction ``t`` (O'Brien-Fleming type)."""
    if t <= 0:
        return 0.0
    return float(2.0 - 2.0 * ndtr(ndtri(1.0 - alpha / 2.0) / math.sqrt(min(t, 1.0))))


def boundaries(fractions: Sequence[float], alpha: float) -> tuple[float, ...]:
    """The one-sided critical values c_1..c_k of looks at information ``fractions``
    (increasing, in (0, 1]), spending ``alpha`` by :func:`obf_spending`."""
    return _boundaries(tuple(float(x) for x in fractions), float(alpha))


@functools.lru_cache(maxsize=256)
def _boundaries(t: tuple[float, ...], alpha: float) -> tuple[float, ...]:
    if not t or any(b <= a for a, b in zip([0.0, *t], t, strict=False)) or t[-1] > 1.0:
        raise ValueError(f"fractions must increase within (0, 1], got {list(t)}")
    out: list[float] = []
    grid = weights = dens = np.empty(0)
    prev_t, spent = 0.0, 0.0
    for k, tk in enumerate(t):
        target = obf_spending(tk, alpha) - spent
        if k == 0:
            c = float(ndtri(1.0 - target)) if target > 0 else _NEVER
        else:
            c = _solve(grid, weights * dens, tk, tk - prev_t, target)
        out.append(c)
        spent += target
        grid, weights, dens = _continuation(grid, weights * dens if k else None, prev_t,
                                            tk, c)
        prev_t = tk
    return tuple(out)


def nominal_levels(fractions: Sequence[float], alpha: float) -> tuple[float, ...]:
    """Each look's one-sided nominal level 1 - Phi(c_k) (0 where nothing is spent)."""
    return tuple(float(1.0 - ndtr(c)) if math.isfinite(c) else 0.0
                 for c in boundaries(fractions, alpha))


def _crossing(grid: np.ndarray, mass: np.ndarray, tk: float, dt: float, c: float) -> float:
    """P(continue to look k-1, then S_k >= c sqrt(t_k)) from the weighted sub-density."""
    return float(mass @ ndtr((grid - c * math.sqrt(tk)) / math.sqrt(dt)))


def _solve(grid: np.ndarray, mass: np.ndarray, tk: float, dt: float, target: float) -> float:
    if target <= 1e-15:
        return _NEVER

    def f(c: float) -> float:
        return _crossing(grid, mass, tk, dt, c) - target

    lo = -10.0
    while f(lo) < 0:  # target above what the continuation can still spend: reject all
        lo -= 10.0
        if lo < -100:
            return -math.inf
    return float(brentq(f, lo, 40.0, xtol=1e-10, rtol=1e-12))


def _continuation(grid: np.ndarray, mass: np.ndarray | None, prev_t: float, tk: float,
                  c: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The grid, Simpson weights and sub-density of S_k on {Z_k < c}."""
    sd = math.sqrt(tk)
    top = c * sd if math.isfinite(c) else _LOW_SD * sd
    new = np.linspace(-_LOW_SD * sd, max(top, -_LOW_SD * sd + 1e-9), GRID)
    step = (new[-1] - new[0]) / (GRID - 1)
    weights = np.full(GRID, 2.0)
    weights[1::2] = 4.0
    weights[0] = weights[-1] = 1.0
    weights *= step / 3.0
    if mass is None:  # the first look: S_1 ~ N(0, t_1)
        dens = np.exp(-0.5 * (new / sd) ** 2) / (sd * math.sqrt(2 * math.pi))
    else:
        dt = tk - prev_t
        z = (new[:, None] - grid[None, :]) / math.sqrt(dt)
        dens = (np.exp(-0.5 * z * z) / math.sqrt(2 * math.pi * dt)) @ mass
    return new, weights, dens
