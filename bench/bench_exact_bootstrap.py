"""Time of the exact whole-question bootstrap against the 50,000-draw path it replaces.

Both compute the intervals (lcb95, ci95, p_nonpositive) of two kernels' per-question D_i
(realistic r-repeat values on the grid of 1/lcm(r(r-1), r^2)):

- ``exact``: :func:`snapaudit.stats.exact.exact_intervals` (n-fold convolution, no draws);
- ``draws``: :func:`snapaudit.stats.bootstrap.whole_question_bootstrap` (50,000 multinomial
  draws of the distinct rows, both kernels jointly) and its percentile summary.

Also printed: the largest difference of any bound between the two (pp; Monte Carlo error of
the draws plus the percentile convention: interpolated vs ``min{v : F(v) >= level}``).
Time is the best of ``--repeat`` runs. Usage::

    python bench/bench_exact_bootstrap.py [--draws 50000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np

from snapaudit.stats.bootstrap import Interval, whole_question_bootstrap
from snapaudit.stats.exact import exact_intervals, grid_denominator


def values(n: int, r: int, seed: int = 0) -> np.ndarray:
    """(n, 2) per-question D_i of two kernels: mostly 0, some churn, on the grid of r."""
    rng = np.random.default_rng(seed)
    denom = grid_denominator(r)
    k = rng.choice([0, 1, -1, 2, denom // 2, denom], size=(n, 1), p=[.6, .1, .05, .1, .1, .05])
    other = np.clip(k + rng.choice([-1, 0, 1], size=(n, 1), p=[.1, .7, .2]), -denom, denom)
    return np.hstack([k, other]) / denom


def best(fn: Callable[[], list[Interval]], repeat: int) -> tuple[float, list[Interval]]:
    times, out = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    print("| n | r | exact s | draws s | draws / exact | max bound difference pp |")
    print("|---|---|---|---|---|---|")
    for n, r in ((400, 2), (10_000, 2), (10_000, 5), (100_000, 5), (1_000_000, 2)):
        v = values(n, r)

        def exact(v: np.ndarray = v, r: int = r) -> list[Interval]:
            boot = exact_intervals(v, r, lambda: whole_question_bootstrap(v, 100, 0))
            return [boot.summary(c, 100.0) for c in range(2)]

        def draws(v: np.ndarray = v) -> list[Interval]:
            boot = whole_question_bootstrap(v, a.draws, 0)
            return [boot.summary(c, 100.0) for c in range(2)]

        te, ie = best(exact, a.repeat)
        td, idr = best(draws, 1 if n >= 100_000 else a.repeat)
        assert all(iv.method == "exact" for iv in ie)
        diff = max(max(abs(x.lcb95 - y.lcb95), abs(x.ci95[0] - y.ci95[0]),
                       abs(x.ci95[1] - y.ci95[1])) for x, y in zip(ie, idr, strict=True))
        print(f"| {n:,} | {r} | {te:.4f} | {td:.2f} | {td / te:,.0f}x | {diff:.3f} |")


if __name__ == "__main__":
    main()
