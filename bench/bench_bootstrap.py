"""Time the count-based whole-question bootstrap against plain numpy index-gather resampling.

Both resample 50,000 draws of two kernels' per-question D_i jointly (r = 2, so D_i takes
values in multiples of 1/4), at n = 400 and n = 10,000. The baseline runs in the same process
so the ratio is meaningful on a noisy machine. Usage::

    python bench/bench_bootstrap.py [--draws 50000] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from snapaudit.bootstrap import index_bootstrap, whole_question_bootstrap


def per_question_values(n: int, seed: int = 0) -> np.ndarray:
    """Realistic r = 2 per-question D_i of the exact and semantic kernels, jointly."""
    rng = np.random.default_rng(seed)
    levels = np.array([-0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0])
    exact = rng.choice(levels, size=n, p=[.03, .07, .6, .1, .08, .02, .1])
    semantic = np.clip(exact + rng.choice([-0.25, 0.0, 0.25], size=n, p=[.1, .7, .2]), -1, 1)
    return np.column_stack([exact, semantic])


def best_of(repeat: int, fn: object) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description="count-based vs index-gather bootstrap")
    parser.add_argument("--draws", type=int, default=50_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"{'n':>7} {'draws':>7} {'categories':>10} {'counts s':>9} {'gather s':>9} "
          f"{'speed-up':>8}  lcb95 counts/gather (exact, semantic)")
    for n in (400, 10_000):
        v = per_question_values(n)
        ours = whole_question_bootstrap(v, args.draws, seed=1)
        base = index_bootstrap(v, args.draws, seed=1)
        t_ours = best_of(args.repeat, lambda v=v: whole_question_bootstrap(v, args.draws, 1))
        t_base = best_of(1 if n > 1000 else args.repeat,
                         lambda v=v: index_bootstrap(v, args.draws, 1))
        lcb_o = np.percentile(ours.draws, 5, axis=0)
        lcb_b = np.percentile(base, 5, axis=0)
        print(f"{n:>7} {args.draws:>7} {ours.categories:>10} {t_ours:>9.4f} {t_base:>9.3f} "
              f"{t_base / t_ours:>7.0f}x  {lcb_o.round(4).tolist()} / {lcb_b.round(4).tolist()}")


if __name__ == "__main__":
    main()
