"""The exact whole-question bootstrap of a mean of gridded per-question values.

Per-question contributions of an r-repeat audit lie on a grid: D_i (a mean over the r(r-1)/2
within pairs of each state minus a mean over the r^2 cross pairs) on multiples of
1/lcm(r(r-1), r^2), an EM change (a difference of means over r repeats) on multiples of 1/r,
which the D grid contains. Resampling n questions with replacement and averaging is then the
sum of n independent draws from the empirical distribution of the integers k_i = L x_i, so the
bootstrap distribution of the mean is the n-fold convolution of that distribution, computed
here exactly (no draws, no seed):

- binary powering of the one-draw distribution (direct convolution while the arrays are
  small, real FFTs above ``DIRECT_LIMIT``; negatives from FFT round-off are clipped to 0 and
  every result renormalized to sum 1);
- every intermediate m-fold sum is cut to mean +- t_m, t_m = b c / 3 + sqrt((b c / 3)^2 +
  2 c m s^2) with c = ln(10^25), s^2 the variance of one draw and b its largest deviation
  from the mean (grid units): by Bernstein's inequality the mass cut is below 1e-25 a side.

Conventions (docs/analysis.md): with F the CDF of the resampled mean,
``lcb95 = min{v : F(v) >= 0.05}``, ``ci95 = [min{v : F(v) >= 0.025}, min{v : F(v) >= 0.975}]``
(each level less ``TIE_TOL``, so that float round-off never skips a grid point where F is
exactly the level), and ``p_nonpositive = P(mean <= 0)``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from snapaudit.stats.bootstrap import BootstrapDraws, Interval

GRID_TOL = 1e-9  # a value lies on the grid when within this of a grid point
TIE_TOL = 1e-12
DIRECT_LIMIT = 1 << 16  # len(a) * len(b) above this: FFT convolution
_TAIL = math.log(1e25)


def grid_denominator(repeats: int) -> int:
    """L = lcm(r(r-1), r^2): D_i (and EM changes) of an r-repeat audit are multiples of 1/L."""
    if repeats < 1:
        raise ValueError("repeats must be at least 1")
    return math.lcm(repeats * (repeats - 1), repeats * repeats) if repeats > 1 else 1


def on_grid(values: np.ndarray, denom: int, tol: float = GRID_TOL) -> np.ndarray | None:
    """The integers k with values = k / denom (each within ``tol``), or None when any value
    is off the grid (or not finite)."""
    v = np.asarray(values, dtype=np.float64)
    if not np.all(np.isfinite(v)):
        return None
    k = np.rint(v * denom)
    if not np.all(np.abs(v - k / denom) <= tol):
        return None
    return k.astype(np.int64)


@dataclass(frozen=True)
class MeanDistribution:
    """P(sum of n draws = (offset + j)), j = 0..len(pmf)-1; the mean is sum / (n denom)."""

    n: int
    denom: int
    offset: int
    pmf: np.ndarray
    cdf: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "cdf", np.cumsum(self.pmf))

    def value(self, j: int) -> float:
        return (self.offset + j) / (self.n * self.denom)

    def quantile(self, level: float) -> float:
        """min{v : F(v) >= level} (less ``TIE_TOL``)."""
        j = int(np.searchsorted(self.cdf, level - TIE_TOL, side="left"))
        return self.value(min(j, self.pmf.size - 1))

    def p_nonpositive(self) -> float:
        """P(mean <= 0), exactly (the sum is an integer)."""
        last = -self.offset  # index of sum == 0
        if last < 0:
            return 0.0
        return float(min(1.0, self.cdf[min(last, self.pmf.size - 1)]))

    def interval(self, point: float, scale: float = 1.0) -> Interval:
        return Interval(float(point) * scale, self.quantile(0.05) * scale,
                        (self.quantile(0.025) * scale, self.quantile(0.975) * scale),
                        self.p_nonpositive(), method="exact",
                        ucb95=self.quantile(0.95) * scale)


def _convolve(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.size * b.size <= DIRECT_LIMIT or min(a.size, b.size) <= 8:
        out = np.convolve(a, b)
    else:
        size = a.size + b.size - 1
        nfft = 1 << (size - 1).bit_length()
        out = np.fft.irfft(np.fft.rfft(a, nfft) * np.fft.rfft(b, nfft), nfft)[:size]
        np.clip(out, 0.0, None, out=out)
    normalized: np.ndarray = out / out.sum()
    return normalized


@dataclass(frozen=True)
class _Part:
    """The distribution of an m-fold sum: P(sum = lo + j) = pmf[j]."""

    m: int
    lo: int
    pmf: np.ndarray


@dataclass(frozen=True)
class _Draw:
    """One draw's mean, variance and largest deviation from the mean (grid units)."""

    mean: float
    var: float
    dev: float

    def half_width(self, m: int) -> int:
        """t_m of Bernstein's inequality (module docstring), rounded up."""
        bc = self.dev * _TAIL / 3
        return math.ceil(bc + math.sqrt(bc * bc + 2 * _TAIL * m * self.var)) + 1


def _cut(part: _Part, draw: _Draw) -> _Part:
    mean, half = draw.mean, draw.half_width(part.m)
    start = max(0, math.floor(part.m * mean - half) - part.lo)
    stop = min(part.pmf.size, math.ceil(part.m * mean + half) - part.lo + 1)
    if start == 0 and stop == part.pmf.size:
        return part
    pmf = part.pmf[start:stop]
    return _Part(part.m, part.lo + start, pmf / pmf.sum())


def _add(a: _Part, b: _Part, draw: _Draw) -> _Part:
    return _cut(_Part(a.m + b.m, a.lo + b.lo, _convolve(a.pmf, b.pmf)), draw)


def mean_distribution(k: np.ndarray, denom: int) -> MeanDistribution:
    """The bootstrap distribution of the mean of ``k / denom`` (k: (n,) integers), resampling
    n values with replacement."""
    k = np.asarray(k, dtype=np.int64)
    n = k.size
    if n == 0:
        raise ValueError("the bootstrap needs at least one question")
    lo, hi = int(k.min()), int(k.max())
    one = np.bincount(k - lo, minlength=hi - lo + 1).astype(np.float64) / n
    mean = float(k.mean())
    draw = _Draw(mean, float(np.mean((k - mean) ** 2)), max(hi - mean, mean - lo))
    base, acc = _Part(1, lo, one), None
    m = n
    while True:
        if m & 1:
            acc = base if acc is None else _add(acc, base, draw)
        m >>= 1
        if not m:
            break
        base = _add(base, base, draw)
    assert acc is not None
    return MeanDistribution(n, denom, acc.lo, acc.pmf)


class Intervals:
    """A joint bootstrap's intervals per column: exact where the column's per-question values
    lie on the grid, else from the draws of ``draw()`` (all columns, computed at most once, so
    those columns keep the stream of :func:`snapaudit.stats.bootstrap.whole_question_bootstrap`).
    """

    def __init__(self, point: np.ndarray, exact: Mapping[int, MeanDistribution],
                 draw: Callable[[], BootstrapDraws]) -> None:
        self.point = point
        self.exact = dict(exact)
        self._draw = draw
        self._drawn: BootstrapDraws | None = None

    @property
    def draws(self) -> BootstrapDraws:
        if self._drawn is None:
            self._drawn = self._draw()
        return self._drawn

    def summary(self, column: int = 0, scale: float = 1.0) -> Interval:
        dist = self.exact.get(column)
        if dist is None:
            return self.draws.summary(column, scale)
        return dist.interval(self.point[column], scale)

    def bounds(self, column: int, level: float, scale: float = 1.0) -> tuple[float, float]:
        dist = self.exact.get(column)
        if dist is None:
            return self.draws.bounds(column, level, scale)
        return dist.quantile(level) * scale, dist.quantile(1.0 - level) * scale


def exact_intervals(values: np.ndarray, repeats: int, draw: Callable[[], BootstrapDraws],
                    columns: Sequence[int] | None = None) -> Intervals:
    """:class:`Intervals` of the column means of ``values`` (n,) or (n, m): exact for each
    of ``columns`` (default: all) whose values lie on the grid of ``repeats``."""
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 1:
        v = v[:, None]
    denom = grid_denominator(repeats)
    exact = {}
    for col in range(v.shape[1]) if columns is None else columns:
        k = on_grid(v[:, col], denom)
        if k is not None and k.size:
            exact[col] = mean_distribution(k, denom)
    return Intervals(v.mean(axis=0), exact, draw)
