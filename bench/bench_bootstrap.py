"""Time and peak memory of the count-based whole-question bootstrap against baselines.

All methods resample 50,000 draws of two kernels' per-question D_i jointly (the same resampled
questions for both; r = 2, so D_i takes values in multiples of 1/4), at n = 400 and 10,000:

- ``counts``: ``snapaudit.stats.bootstrap.whole_question_bootstrap`` (multinomial counts of the
  distinct per-question rows);
- ``gather``: ``snapaudit.stats.bootstrap.index_bootstrap`` (numpy index matrix in ~10M chunks);
- ``scipy``: ``scipy.stats.bootstrap(method="percentile", paired=True, vectorized=True,
  batch=...)`` with a batch of ~10M indices, the two kernels as a paired, vector statistic
  (its ``rng=`` argument needs scipy >= 1.15).

Time is the best of ``--repeat`` runs (the slow baselines at n = 10,000 run once); peak memory
is tracemalloc's peak (numpy reports its buffers to it) in a separate, untimed run. The
intervals must agree: each bound (5th, 2.5th and 97.5th percentile) of every method is compared
with ``counts``; the tolerance is 4 Monte-Carlo standard errors of a difference of two
independent percentile estimates plus one step of the D-hat grid (1 / 4n). Usage::

    python bench/bench_bootstrap.py [--draws 50000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc
from collections.abc import Callable

import numpy as np
import scipy.stats

from snapaudit.stats.bootstrap import index_bootstrap, whole_question_bootstrap

Method = Callable[[np.ndarray, int, int], np.ndarray]
PCTS = (5.0, 2.5, 97.5)
CHUNK = 10_000_000


def per_question_values(n: int, seed: int = 0) -> np.ndarray:
    """Realistic r = 2 per-question D_i of the exact and semantic kernels, jointly."""
    rng = np.random.default_rng(seed)
    levels = np.array([-0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0])
    exact = rng.choice(levels, size=n, p=[.03, .07, .6, .1, .08, .02, .1])
    semantic = np.clip(exact + rng.choice([-0.25, 0.0, 0.25], size=n, p=[.1, .7, .2]), -1, 1)
    return np.column_stack([exact, semantic])


def counts(v: np.ndarray, draws: int, seed: int) -> np.ndarray:
    out: np.ndarray = whole_question_bootstrap(v, draws, seed).draws
    return out


def gather(v: np.ndarray, draws: int, seed: int) -> np.ndarray:
    return index_bootstrap(v, draws, seed, chunk=CHUNK)


def _mean_both(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
    return np.stack([x.mean(axis=axis), y.mean(axis=axis)])


def scipy_percentile(v: np.ndarray, draws: int, seed: int) -> np.ndarray:
    res = scipy.stats.bootstrap((v[:, 0], v[:, 1]), _mean_both, paired=True, vectorized=True,
                                n_resamples=draws, batch=max(1, CHUNK // v.shape[0]),
                                method="percentile", rng=np.random.default_rng(seed))
    dist: np.ndarray = res.bootstrap_distribution.T
    return dist


METHODS: dict[str, Method] = {"counts": counts, "gather": gather, "scipy": scipy_percentile}


def timed(fn: Method, v: np.ndarray, draws: int, repeat: int) -> tuple[float, np.ndarray]:
    best, out = float("inf"), np.empty(0)
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn(v, draws, 1)
        best = min(best, time.perf_counter() - t0)
    return best, out


def peak_mib(fn: Method, v: np.ndarray, draws: int) -> float:
    tracemalloc.start()
    fn(v, draws, 1)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return peak / 2**20


def tolerance(reference: np.ndarray, n: int, draws: int) -> np.ndarray:
    """4 standard errors of the difference of two percentile estimates + one grid step, per
    (percentile, kernel), from a normal approximation of the bootstrap distribution."""
    sd = reference.std(axis=0)
    p = np.array(PCTS)[:, None] / 100
    z = scipy.stats.norm.ppf(p)
    se = np.sqrt(p * (1 - p) / draws) / scipy.stats.norm.pdf(z) * sd
    out: np.ndarray = 4 * np.sqrt(2) * se + 1 / (4 * n)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description="count-based bootstrap vs numpy and scipy")
    ap.add_argument("--draws", type=int, default=50_000)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    print(f"{args.draws:,} draws, both kernels jointly; time = best of {args.repeat} "
          "(slow baselines at n = 10,000: one run); memory = tracemalloc peak\n")
    print("| n | method | time s | x counts | peak MiB | lcb95 exact / sem (pp) | "
          "ci95 exact (pp) | max abs diff / tolerance |\n|---|---|---|---|---|---|---|---|")
    disagree = 0
    for n in (400, 10_000):
        v = per_question_values(n)
        ref: np.ndarray | None = None
        t_ref, q_ref, tol = 0.0, np.empty(0), np.empty(0)
        for name, fn in METHODS.items():
            rep = args.repeat if name == "counts" or n <= 1000 else 1
            secs, out = timed(fn, v, args.draws, rep)
            mem = peak_mib(fn, v, args.draws)
            q = np.percentile(out, PCTS, axis=0) * 100
            if ref is None:
                ref, t_ref = out, secs
                q_ref, tol = q, tolerance(out, n, args.draws) * 100
            worst = (np.abs(q - q_ref) / tol).max()
            disagree += int(worst > 1)
            print(f"| {n:,} | {name} | {secs:.3f} | {secs / t_ref:.1f} | {mem:.1f} | "
                  f"{q[0, 0]:.3f} / {q[0, 1]:.3f} | [{q[1, 0]:.3f}, {q[2, 0]:.3f}] | "
                  f"{worst:.2f}{' ok' if worst <= 1 else ' DISAGREE'} |")
    if disagree:
        raise SystemExit(f"{disagree} method(s) disagree with the count-based intervals")


if __name__ == "__main__":
    main()
