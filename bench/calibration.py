"""Calibration study: coverage, gate false-pass rate, power and a checked sample-size table.

Every cohort is simulated from known per-question answer distributions (stable, noisy,
partially shifting, flipping and paraphrasing questions; ``snapaudit.stats.simulate``) with an
analytic true D, and audited with the real bootstrap and gate (``snapaudit.stats.calibration``).
The first cohort of every cell is also run through ``snapaudit.stats.analysis.analyze`` and must
give the same numbers. Two more sections: a clustered world (``snapaudit.stats.cluster_sim``:
clusters of 5-20 questions, intra-cluster correlation of D_i about 0.1 and 0.3) audited with the
question and the cluster bootstrap, and the permutation test's type-I error (D = 0) and power
(D = 3, 6, 10). Usage::

    python bench/calibration.py [--quick] [--cohorts 1000] [--draws 2000] [--workers 2]
                                [--sections main,cluster,permutation] [--permutations 1000]
                                [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace

import numpy as np

from snapaudit.stats import plan as plan_mod
from snapaudit.stats.calibration import (
    KERNELS,
    Cell,
    CellSummary,
    Outcomes,
    Rate,
    check_cohort,
    summarize_cell,
)
from snapaudit.stats.calibration import run_cohorts as run_chunk
from snapaudit.stats.cluster_sim import ClusterCell, run_cluster_cohorts
from snapaudit.stats.permutation import codes_to_bits, permutation_test
from snapaudit.stats.simulate import cohort_values, simulate_cohort, standard_mixture

CHUNK = 250


def run_cells(cells: Sequence[Cell], workers: int) -> list[Outcomes]:
    """All cohorts of all cells, in chunks over ``workers`` processes (seeded per cohort,
    so the result does not depend on the number of workers)."""
    tasks = [(i, s, min(s + CHUNK, c.cohorts)) for i, c in enumerate(cells)
             for s in range(0, c.cohorts, CHUNK)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(run_chunk, cells[i], s, e) for i, s, e in tasks]
        parts: list[list[Outcomes]] = [[] for _ in cells]
        for (i, _, _), fut in zip(tasks, futures, strict=True):
            parts[i].append(fut.result())
    return [Outcomes.concat(p) for p in parts]


def coverage_table(summaries: Sequence[CellSummary]) -> str:
    head = ("| n | r | true D exact / sem (pp) | mean D-hat exact / sem | LCB covers exact | "
            "LCB covers sem | 95% CI covers exact | 95% CI covers sem | gate passes |\n"
            "|---|---|---|---|---|---|---|---|---|")
    lines = [head]
    for s in summaries:
        c = s.cell
        lines.append(f"| {c.n:,} | {c.repeats} | {s.true_d_pp[0]:.1f} / {s.true_d_pp[1]:.1f} | "
                     f"{s.mean_d_hat[0]:.2f} / {s.mean_d_hat[1]:.2f} | {s.lcb_coverage[0]} | "
                     f"{s.lcb_coverage[1]} | {s.ci_coverage[0]} | {s.ci_coverage[1]} | "
                     f"{s.gate_pass} |")
    return "\n".join(lines)


def plan_cells(base: Cell, targets: Sequence[float], pilot_n: int) -> list[tuple[Cell, str]]:
    """Per (r, D): plan n from a large simulated pilot, then a cell at that n."""
    out = []
    for r in (2, 4):
        for d in targets:
            mixture = standard_mixture(d)
            rng = np.random.Generator(np.random.PCG64([base.seed, 7, r, round(10 * d)]))
            v = cohort_values(simulate_cohort(mixture, pilot_n, r, rng))
            pilot = plan_mod.pilot_from_values({k: v[:, i] for i, k in enumerate(KERNELS)}, r)
            row = plan_mod.plan(pilot, [d]).rows[0]
            lcb_n = max(x.questions or 0 for x in row.rules if "lcb95" in x.rule)
            n = row.questions or lcb_n
            note = (f"sd exact {pilot.sd_pp['exact']:.1f} / sem {pilot.sd_pp['semantic']:.1f} pp;"
                    f" planned gate n {row.questions or '-'}, LCB-rules n {lcb_n:,}")
            out.append((replace(base, n=n, repeats=r, d_pp=d), note))
    return out


def plan_table(cells: Sequence[tuple[Cell, str]], results: Sequence[Outcomes]) -> str:
    lines = ["| r | D (pp) | pilot sd, plan | simulated at n | gate power | "
             "power of exact LCB > 0 | power of sem LCB > 0 | power of exact D >= 3 |",
             "|---|---|---|---|---|---|---|---|"]
    for (cell, note), out in zip(cells, results, strict=True):
        total = out.passed.shape[0]
        lcb = (out.lcb95 > 0).mean(axis=0)
        point = (out.d_hat[:, 0] >= 3).mean()
        lines.append(f"| {cell.repeats} | {cell.d_pp:g} | {note} | {cell.n:,} | "
                     f"{100 * out.passed.sum() / total:.1f}% | {100 * lcb[0]:.1f}% | "
                     f"{100 * lcb[1]:.1f}% | {100 * point:.1f}% |")
    return "\n".join(lines)


# -- clustered world: question vs cluster bootstrap ---------------------------------------

def run_cluster_cells(cells: Sequence[ClusterCell], workers: int) -> list[np.ndarray]:
    tasks = [(i, s, min(s + CHUNK, c.cohorts)) for i, c in enumerate(cells)
             for s in range(0, c.cohorts, CHUNK)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(run_cluster_cohorts, cells[i], s, e) for i, s, e in tasks]
        parts: list[list[np.ndarray]] = [[] for _ in cells]
        for (i, _, _), fut in zip(tasks, futures, strict=True):
            parts[i].append(fut.result())
    return [np.concatenate(p) for p in parts]


def cluster_table(cells: Sequence[ClusterCell], results: Sequence[np.ndarray]) -> str:
    lines = ["| clusters (5-20 questions) | mean n | rho | ICC of D_i exact / sem | "
             "question bootstrap: 95% CI covers exact / sem | LCB covers exact / sem | "
             "cluster bootstrap: 95% CI covers exact / sem | LCB covers exact / sem |",
             "|---|---|---|---|---|---|---|---|"]
    for cell, out in zip(cells, results, strict=True):
        total = out.shape[0]

        def rate(col: int, k: int, out: np.ndarray = out, total: int = total) -> str:
            return str(Rate(int(out[:, k, col].sum()), total))

        icc = np.nanmean(out[:, :, 1], axis=0)
        lines.append(f"| {cell.clusters} | {out[:, 0, 0].mean():.0f} | {cell.rho:g} | "
                     f"{icc[0]:.2f} / {icc[1]:.2f} | {rate(3, 0)} / {rate(3, 1)} | "
                     f"{rate(2, 0)} / {rate(2, 1)} | {rate(5, 0)} / {rate(5, 1)} | "
                     f"{rate(4, 0)} / {rate(4, 1)} |")
    return "\n".join(lines)


# -- permutation test: type-I error and power ----------------------------------------------

def run_permutation_cohorts(cell: Cell, start: int, stop: int, permutations: int) -> np.ndarray:
    """(cohorts, 2) p-values of the permutation test, exact and semantic kernels."""
    out = np.empty((stop - start, 2))
    for row, index in enumerate(range(start, stop)):
        cohort, seed = cell.cohort(index)
        for col, (old, new) in enumerate(((cohort.exact_old, cohort.exact_new),
                                          (cohort.fact_old, cohort.fact_new))):
            out[row, col] = permutation_test(codes_to_bits(old, new), cell.repeats,
                                             permutations, seed).p_value
    return out


def run_permutation_cells(cells: Sequence[Cell], workers: int,
                          permutations: int) -> list[np.ndarray]:
    tasks = [(i, s, min(s + CHUNK, c.cohorts)) for i, c in enumerate(cells)
             for s in range(0, c.cohorts, CHUNK)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        futures = [pool.submit(run_permutation_cohorts, cells[i], s, e, permutations)
                   for i, s, e in tasks]
        parts: list[list[np.ndarray]] = [[] for _ in cells]
        for (i, _, _), fut in zip(tasks, futures, strict=True):
            parts[i].append(fut.result())
    return [np.concatenate(p) for p in parts]


def permutation_table(cells: Sequence[Cell], results: Sequence[np.ndarray],
                      gate: Sequence[Outcomes]) -> str:
    lines = ["| n | r | true D (pp) | rejects at 5%: exact | rejects at 5%: semantic | "
             "gate passes (same cohorts) |", "|---|---|---|---|---|---|"]
    for cell, p, g in zip(cells, results, gate, strict=True):
        total = p.shape[0]
        lines.append(f"| {cell.n:,} | {cell.repeats} | {cell.d_pp:g} | "
                     f"{Rate(int((p[:, 0] <= 0.05).sum()), total)} | "
                     f"{Rate(int((p[:, 1] <= 0.05).sum()), total)} | "
                     f"{Rate(int(g.passed.sum()), int(g.passed.shape[0]))} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help="100 cohorts (200 for cluster/permutation), 500 draws/permutations")
    ap.add_argument("--cohorts", type=int, default=1000)
    ap.add_argument("--draws", type=int, default=2000)
    ap.add_argument("--permutations", type=int, default=1000)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--sections", default="main,cluster,permutation")
    ap.add_argument("--json", dest="json_out")
    args = ap.parse_args()
    sections = {s.strip() for s in args.sections.split(",")}
    if "main" in sections:
        main_section(args)
    if "cluster" in sections:
        cluster_section(args)
    if "permutation" in sections:
        permutation_section(args)


def cluster_section(args: argparse.Namespace) -> None:
    cohorts, draws = (200, 500) if args.quick else (args.cohorts, args.draws)
    cells = [ClusterCell(g, 2, 6.0, rho, cohorts=cohorts, draws=draws, seed=args.seed)
             for g in (32, 160) for rho in (0.0, 0.55, 0.85)]
    t0 = time.perf_counter()
    results = run_cluster_cells(cells, args.workers)
    print(f"## Clustered questions: question vs cluster bootstrap (r = 2, true D = 6 pp; "
          f"{cohorts} cohorts per cell, {draws} draws, {time.perf_counter() - t0:.0f} s)\n")
    print(cluster_table(cells, results) + "\n")


def permutation_section(args: argparse.Namespace) -> None:
    cohorts, perms = (200, 500) if args.quick else (args.cohorts, args.permutations)
    base = Cell(100, 2, 0.0, cohorts=cohorts, draws=500, seed=args.seed)
    cells = [replace(base, n=n, repeats=r, d_pp=d) for d in (0.0, 3.0, 6.0, 10.0)
             for n in (100, 400) for r in (2, 4)]
    t0 = time.perf_counter()
    results = run_permutation_cells(cells, args.workers, perms)
    elapsed = time.perf_counter() - t0
    gate = run_cells(cells, args.workers)
    print(f"## Permutation test of equal answer distributions ({cohorts} cohorts per cell, "
          f"{perms} permutations, {elapsed:.0f} s; gate with 500 bootstrap draws)\n")
    print(permutation_table(cells, results, gate) + "\n")


def main_section(args: argparse.Namespace) -> None:
    cohorts, draws = (100, 500) if args.quick else (args.cohorts, args.draws)
    base = Cell(100, 2, 0.0, cohorts=cohorts, draws=draws, seed=args.seed)
    main_cells = [replace(base, n=n, repeats=r, d_pp=d) for d in (0.0, 3.0, 6.0, 10.0)
                  for n in (100, 400, 2000) for r in (2, 4)]
    para_cells = [replace(base, n=n, repeats=r, d_pp=6.0, paraphrase_pp=6.0)
                  for n in (100, 400, 2000) for r in (2, 4)]
    t0 = time.perf_counter()
    planned = plan_cells(base, (3.0, 6.0, 10.0), pilot_n=20_000)
    checks = [check_cohort(c, 0) for c in [*main_cells[:6], *para_cells[:2]]]
    every = [*main_cells, *para_cells, *(c for c, _ in planned)]
    results = run_cells(every, args.workers)
    elapsed = time.perf_counter() - t0
    k, p = len(main_cells), len(para_cells)
    summaries = [summarize_cell(c, o) for c, o in zip(every[:k + p], results[:k + p],
                                                      strict=True)]
    print(f"# calibration: {cohorts} cohorts per cell, {draws} bootstrap draws, "
          f"{args.workers} workers, {elapsed:.0f} s; analyze() agrees on checked cohorts: "
          f"{all(checks)} ({len(checks)})\n")
    print("## Coverage, false-pass rate and power (standard mixture)\n")
    print(coverage_table(summaries[:k]) + "\n")
    print("## Paraphrase-only churn: exact D = 6 pp, semantic D = 0\n")
    print(coverage_table(summaries[k:]) + "\n")
    print("## Sample size: planned from a 20,000-question simulated pilot, checked by simulation\n")
    print(plan_table(planned, results[k + p:]))
    if args.json_out:
        doc = [{"n": s.cell.n, "r": s.cell.repeats, "d_pp": s.cell.d_pp,
                "paraphrase_pp": s.cell.paraphrase_pp, "true_d": s.true_d_pp,
                "lcb_coverage": [x.value for x in s.lcb_coverage],
                "ci_coverage": [x.value for x in s.ci_coverage],
                "gate_pass": s.gate_pass.value} for s in summaries]
        with open(args.json_out, "w", encoding="utf-8") as fh:
            json.dump(doc, fh, indent=1)
    if not all(checks):
        raise SystemExit("the fast path disagrees with analyze()")


if __name__ == "__main__":
    main()
