"""Whole-question bootstrap of per-question means, by resampling counts of distinct rows.

Resampling n questions with replacement and averaging a per-question value matrix V (n, m)
depends only on how many times each question is drawn; questions whose rows of V are equal
are interchangeable, so it depends only on how many times each *distinct row* is drawn.
Those counts are Multinomial(n, f_k / n), f_k the multiplicity of distinct row k. With few
repeats per state the per-question values take few distinct rows (for r = 2 and two kernels,
a few dozen at most), so a draw costs O(K) instead of O(n).

The stream (documented, reproducible on any machine and chunking):
1. ``U, inverse = numpy.unique(V, axis=0, return_inverse=True)``: categories are the distinct
   rows in lexicographic order of their float64 values;
2. ``f = bincount(inverse)``, ``p = f / n``;
3. ``rng = numpy.random.Generator(numpy.random.PCG64(seed))``;
4. draw b = 1..B in order: ``counts_b = rng.multinomial(n, p)`` (drawn in chunks of rows with
   ``size=``, which consumes the stream exactly as one row at a time);
5. the draw's column means are ``counts_b @ U / n``.
All columns of V are resampled jointly (the same resampled questions for every column).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

CHUNK_ELEMENTS = 4_000_000
DEFAULT_DRAWS = 50_000
Method = Literal["exact", "draws"]


class Bootstrapped(Protocol):
    """What the analysis reads of a joint bootstrap: point estimates and column intervals."""

    @property
    def point(self) -> np.ndarray: ...

    def summary(self, column: int = 0, scale: float = 1.0) -> Interval: ...

    def bounds(self, column: int, level: float, scale: float = 1.0) -> tuple[float, float]:
        """The ``level`` and ``1 - level`` quantiles of the column's bootstrap mean."""
        ...


@dataclass(frozen=True)
class BootstrapDraws:
    """Point estimates (column means of V) and the bootstrap draws of them (B, m)."""

    point: np.ndarray
    draws: np.ndarray
    categories: int

    def summary(self, column: int = 0, scale: float = 1.0) -> Interval:
        return summarize(self.point[column] * scale, self.draws[:, column] * scale)

    def bounds(self, column: int, level: float, scale: float = 1.0) -> tuple[float, float]:
        lo, hi = percentiles(self.draws[:, column] * scale, (100.0 * level, 100.0 - 100.0 * level))
        return lo, hi


@dataclass(frozen=True, slots=True)
class Interval:
    """A point estimate with its percentile-bootstrap bounds; ``method``: "draws" (Monte
    Carlo, :func:`summarize`) or "exact" (:mod:`snapaudit.stats.exact`)."""

    point: float
    lcb95: float
    ci95: tuple[float, float]
    p_nonpositive: float
    method: str = "draws"
    ucb95: float | None = None  # the one-sided 95% upper bound (the 95th percentile)

    def to_json(self) -> dict[str, object]:
        return {"point": self.point, "lcb95": self.lcb95, "ci95": list(self.ci95),
                "p_nonpositive": self.p_nonpositive, "method": self.method}


def summarize(point: float, draws: np.ndarray, tol: float = 1e-9) -> Interval:
    """5th percentile (one-sided 95% lower bound), 2.5th/97.5th percentiles (linear
    interpolation, numpy's default; :func:`percentiles`, the same floats) and the share of
    draws <= 0 (within ``tol``)."""
    lo5, lo, hi, hi95 = percentiles(draws, (5.0, 2.5, 97.5, 95.0))
    return Interval(float(point), float(lo5), (float(lo), float(hi)),
                    float(np.mean(draws <= tol)), ucb95=float(hi95))


def percentiles(sample: np.ndarray, levels: Sequence[float]) -> list[float]:
    """``numpy.percentile(sample, levels)`` (method "linear") as Python floats, bit for bit,
    for a non-empty 1-D float sample and levels in [0, 100]: without ``numpy.ma``, which
    ``numpy.percentile`` imports on its first call (through ``numpy.unique``; ~0.03 s of a
    short ``snapaudit analyze``). The same arithmetic as numpy's:

    - virtual index ``v = (n - 1) * (level / 100)``, previous index ``j = floor(v)``, or -1
      (the largest value) where ``v >= n - 1``; ``g = v - j``;
    - the order statistics at ``j`` and ``j + 1`` by ``numpy.partition`` with numpy's own kth
      list (unique of 0, -1 and the indexes), so equal values of either sign (-0.0, 0.0) land
      where numpy puts them;
    - numpy's lerp: ``a + (b - a) * g``, or ``b - (b - a) * (1 - g)`` where ``g >= 0.5``;
    - a sample holding a NaN gives its last value after partitioning (a NaN) at every level.

    tests/stats/test_percentiles.py compares it with ``numpy.percentile`` bit for bit."""
    x = np.asarray(sample, dtype=np.float64)
    if x.ndim != 1 or x.shape[0] == 0:
        raise ValueError("percentiles need a non-empty 1-D sample")
    n = int(x.shape[0])
    spots = []
    for level in levels:
        if not 0.0 <= level <= 100.0:
            raise ValueError("Percentiles must be in the range [0, 100]")
        v = (n - 1) * (float(level) / 100.0)
        j = -1 if v >= n - 1 else math.floor(v)  # numpy's previous index
        spots.append((j, -1 if j == -1 else j + 1, v - j))
    kth = sorted({0, -1} | {k for lo, hi, _ in spots for k in (lo, hi)})
    part = np.partition(x, kth)
    last = float(part[n - 1])
    if math.isnan(last):  # NaN sorts last
        return [last] * len(spots)
    out = []
    for lo, hi, g in spots:
        a, b = float(part[lo]), float(part[hi])
        diff = b - a
        out.append(b - diff * (1 - g) if g >= 0.5 else a + diff * g)
    return out


def whole_question_bootstrap(values: np.ndarray, draws: int = DEFAULT_DRAWS, seed: int = 0,
                             *, chunk_elements: int = CHUNK_ELEMENTS) -> BootstrapDraws:
    """Bootstrap the column means of ``values`` (n,) or (n, m), resampling whole questions.

    ``chunk_elements`` bounds the memory of one block of counts; it never changes the draws.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 1:
        v = v[:, None]
    n = v.shape[0]
    if n == 0 or draws < 1:
        raise ValueError("the bootstrap needs at least one question and one draw")
    uniq, inverse = distinct_rows(v)
    freq = np.bincount(inverse, minlength=uniq.shape[0])
    p = freq / n
    rng = np.random.Generator(np.random.PCG64(seed))
    out = np.empty((draws, v.shape[1]))
    step = max(1, chunk_elements // uniq.shape[0])
    for start in range(0, draws, step):
        size = min(step, draws - start)
        counts = rng.multinomial(n, p, size=size)
        out[start:start + size] = (counts @ uniq) / n
    return BootstrapDraws(v.mean(axis=0), out, int(uniq.shape[0]))


def distinct_rows(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.unique(v, axis=0, return_inverse=True)`` of a 2-D float64 array (the inverse
    flat): the distinct rows in lexicographic order of their values and each row's number.

    When every value is finite and no zero is negative, rows compare as the tuples of their
    values and equal values have equal bits, so a ``lexsort`` of the columns gives the same
    rows in the same order (about ten times faster than the sort of ``numpy.unique``'s
    structured view); otherwise ``numpy.unique`` itself."""
    if v.shape[0] == 0 or v.shape[1] == 0 or not np.isfinite(v).all() or bool(
            np.signbit(v[v == 0]).any()):
        uniq, inverse = np.unique(v, axis=0, return_inverse=True)
        return uniq, inverse.ravel()
    order = np.lexsort(v.T[::-1])
    ordered = v[order]
    starts = np.empty(v.shape[0], dtype=np.bool_)
    starts[0] = True
    starts[1:] = (ordered[1:] != ordered[:-1]).any(axis=1)
    inverse = np.empty(v.shape[0], dtype=np.intp)
    inverse[order] = np.cumsum(starts) - 1
    return ordered[starts], inverse


def index_bootstrap(values: np.ndarray, draws: int, seed: int,
                    chunk: int = 10_000_000) -> np.ndarray:
    """The straightforward baseline: gather resampled question indices (B, m).

    Not the stream of :func:`whole_question_bootstrap`; kept for benchmarks and tests.
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim == 1:
        v = v[:, None]
    n = v.shape[0]
    rng = np.random.Generator(np.random.PCG64(seed))
    out = np.empty((draws, v.shape[1]))
    step = max(1, chunk // n)
    for start in range(0, draws, step):
        size = min(step, draws - start)
        idx = rng.integers(0, n, size=(size, n))
        out[start:start + size] = v[idx].mean(axis=1)
    return out
