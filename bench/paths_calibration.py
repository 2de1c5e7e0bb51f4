"""Coverage of the path-averaged D's two-stage interval (``snapaudit.stats.paths``).

Each simulated audit has n questions measured on K random corpus paths: a table D_ij of
per-question excess churn (fractions), drawn from a crossed random-effects world whose
content-averaged D (the mean over the distribution of paths and questions) is known:

- ``normal``: D_ij = mu + a_j + b_i + e_ij, a_j ~ N(0, path_sd), b_i ~ N(0, question_sd),
  e_ij ~ N(0, residual_sd); the true value is mu;
- ``discrete``: D_ij is 0 or 1/2 or 1 (a question whose answer moves on some paths and not
  on others), P(D_ij = 1) = clip(p + a_j + b_i, 0, 1) and P(D_ij = 1/2) = 0.1; the true value
  is computed once from 4 million draws of (a, b).

Each audit computes the seeded two-stage bootstrap (paths, then questions) with the real
:func:`snapaudit.stats.paths.path_step` and records whether its 95% interval holds the true
value and whether its one-sided 95% lower bound stays below it. Usage::

    python bench/paths_calibration.py [--quick] [--audits 1000] [--draws 1000] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import dataclass

import numpy as np

from snapaudit.stats.paths import path_step


@dataclass(frozen=True)
class World:
    kind: str  # "normal" or "discrete"
    paths: int
    questions: int
    path_sd: float
    question_sd: float = 0.08
    residual_sd: float = 0.10
    mu: float = 0.06


def _discrete_truth(w: World) -> float:
    rng = np.random.default_rng(12345)
    a = rng.normal(0, w.path_sd, 4_000_000)
    b = rng.normal(0, w.question_sd, 4_000_000)
    p1 = np.clip(w.mu + a + b, 0.0, 0.9)
    return float((p1 + 0.5 * 0.1).mean())


def simulate(w: World, rng: np.random.Generator) -> np.ndarray:
    a = rng.normal(0, w.path_sd, w.paths)
    b = rng.normal(0, w.question_sd, w.questions)
    if w.kind == "normal":
        e = rng.normal(0, w.residual_sd, (w.questions, w.paths))
        d: np.ndarray = w.mu + a[None, :] + b[:, None] + e
        return d
    p1 = np.clip(w.mu + a[None, :] + b[:, None], 0.0, 0.9)
    u = rng.random((w.questions, w.paths))
    return np.where(u < p1, 1.0, np.where(u < p1 + 0.1, 0.5, 0.0))


def coverage(w: World, audits: int, draws: int, seed: int) -> dict[str, float]:
    truth = 100 * (w.mu if w.kind == "normal" else _discrete_truth(w))
    rng = np.random.default_rng(seed)
    inside = below = 0
    shares = []
    for i in range(audits):
        d = simulate(w, rng)
        states = [(f"p{j}.a", f"p{j}.b") for j in range(w.paths)]
        s = path_step("a->b", states, d, draws, seed + i)
        inside += s.ci95[0] <= truth <= s.ci95[1]
        below += s.lcb95 < truth
        shares.append(s.path_share)
    return {"coverage95": inside / audits, "lcb95_holds": below / audits,
            "mean_path_share": float(np.mean(shares)), "truth_pp": truth}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="200 audits, 500 draws")
    ap.add_argument("--audits", type=int, default=1000)
    ap.add_argument("--draws", type=int, default=1000)
    ap.add_argument("--json", help="also write the table as JSON here")
    args = ap.parse_args()
    audits, draws = (200, 500) if args.quick else (args.audits, args.draws)
    worlds = [World(kind, k, n, sd) for kind in ("normal", "discrete")
              for sd in (0.0, 0.03, 0.08) for k in (3, 5, 10, 20) for n in (100, 400)]
    rows = []
    start = time.perf_counter()
    print(f"{audits} audits per cell, {draws} draws; nominal: 0.95 (two-sided), 0.95 (LCB)")
    print("world     path_sd  K    n   coverage95  lcb95_holds  path_share")
    for i, w in enumerate(worlds):
        r = coverage(w, audits, draws, seed=1000 * i)
        rows.append({**w.__dict__, **r})
        print(f"{w.kind:<9} {w.path_sd:6.2f} {w.paths:3d} {w.questions:4d}"
              f"  {r['coverage95']:10.3f}  {r['lcb95_holds']:11.3f}  {r['mean_path_share']:9.3f}")
    print(f"elapsed {time.perf_counter() - start:.1f} s")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()
