"""Calibration of the sequential design (issue 38): error over every look, power, questions.

Each simulated audit draws n = 400 questions at r = 2 from a mixture of known answer
distributions (``snapaudit.stats.simulate``; per-question SD of D_i like the reference study's
NQ run: about 0.2 at D = 0, 0.4 at D = 10 pp) and decides with the code ``snapaudit analyze
--looks`` runs: ``take_looks`` (exact bootstrap, the study gate: exact D >= 3 and both kernels'
repeated lower bounds > 0 for INCOMPATIBLE, both upper bounds < M for COMPATIBLE) on
``cohort_values``. On the same audits, for contrast:

- **naive**: the fixed design's 95% bounds (``take_looks`` with one look) at each of the K
  looks, stopping at the first decisive one (no alpha spending);
- **fixed**: one look at all n questions;
- **EB CS** / **betting**: anytime-valid tests of each kernel's mean (``sequential_cs.py``)
  read at the same K looks, the same gate (intersection-union, exact D >= 3);
- **variants** of each look's bounds beside the package's (every upper bound, each look's
  and the fixed design's, over the questions plus one pseudo-question with D_i = +1, the top
  of D_i's range, ``snapaudit.stats.upper``; the lower bound over the questions alone):
  *unpadded*, the looks as first landed (the bootstrap of the look's questions alone);
  *pair*, both bounds over the questions plus D_i = -1 and +1 in one bootstrap; *end*, the
  upper bound plus D_i = +1 and the lower bound plus D_i = -1; each on the interim looks only
  or on every look.

A second kind of world, ``rare``, has churn in few questions and no repeat noise (flips and
stable questions only): the worst case for a bootstrap bound on few questions. The first
audit of every case also runs through ``snapaudit.stats.analysis.analyze`` (answer
rows and labels, ``looks = K``) and must give the same looks. Usage::

    python bench/sequential_calibration.py [--audits 2000] [--workers 2] [--seed 0]
"""

from __future__ import annotations

import argparse
import itertools
import os
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

import numpy as np
from scipy.special import ndtri

from sequential_cs import betting_rejects, lower_and_upper_d
from snapaudit.stats.analysis import AnalysisConfig, analyze
from snapaudit.stats.calibration import Rate
from snapaudit.stats.cluster import Resampling
from snapaudit.stats.gate import GateConfig, evaluate
from snapaudit.stats.sequential import LookData, block_sizes, take_looks
from snapaudit.stats.simulate import (
    FLIP,
    NEW,
    OLD,
    PARAPHRASE,
    STABLE,
    Mixture,
    QuestionType,
    cohort_tables,
    cohort_values,
    fact_of,
    simulate_cohort,
)
from snapaudit.stats.spending import boundaries, nominal_levels

N, R, K = 400, 2, 8
KERNELS = ("exact", "semantic")
METHODS = ("sequential", "naive", "fixed", "eb", "betting", "unpadded", "pair, interim",
           "pair, every look", "end, interim", "end, every look")
DECISIONS = {"incompatible": 1, "compatible": 2}
CHUNK = 250

# fact-level noise (both kernels) and wording noise (exact kernel only); the same in both
# states, so they add variance and no D
NOISE = QuestionType("noise", {"fact 0": 0.5, "fact 1": 0.5}, {"fact 0": 0.5, "fact 1": 0.5})
WORDING = QuestionType("wording", {"fact 0": 0.5, "fact 0 variant 1": 0.5},
                       {"fact 0": 0.5, "fact 0 variant 1": 0.5})


@dataclass(frozen=True)
class World:
    """``study``: true D = ``d_pp`` in both kernels from flips (D_i = 1) on a background
    whose fact-level noise grows with D as in the reference study (18% of questions at
    D = 0, 32.3% at D = 10 pp) plus 5% wording noise: sd(D_i) 0.21 / 0.18 (exact / semantic)
    at D = 0, 0.40 / 0.39 at D = 10 pp; ``paraphrase_pp`` adds questions whose answer
    changes wording only (exact D_i = 1, semantic 0), so exact D = d_pp + paraphrase_pp.
    ``rare``: flips and stable questions only (no repeat noise): churn in few questions."""

    kind: str
    d_pp: float
    paraphrase_pp: float = 0.0

    @property
    def mixture(self) -> Mixture:
        flip, para = self.d_pp / 100, self.paraphrase_pp / 100
        if self.kind == "rare":
            return Mixture((STABLE, FLIP), (1 - flip, flip))
        noise, wording = 0.18 + 0.0143 * (self.d_pp + self.paraphrase_pp), 0.05
        return Mixture((STABLE, NOISE, WORDING, FLIP, PARAPHRASE),
                       (1 - flip - para - noise - wording, noise, wording, flip, para))

    def rng(self, index: int, seed: int) -> np.random.Generator:
        return np.random.Generator(np.random.PCG64(np.random.SeedSequence(
            [seed, self.kind == "rare", round(1000 * self.d_pp),
             round(1000 * self.paraphrase_pp), index])))

    def values(self, index: int, seed: int) -> np.ndarray:
        return cohort_values(simulate_cohort(self.mixture, N, R, self.rng(index, seed)))


@dataclass(frozen=True)
class Case:
    world: World
    margin: float
    claim: str
    what: str

    @property
    def gate(self) -> GateConfig:  # the study profile: exact D >= 3, both lcb95 > 0
        return GateConfig(margin_pp=self.margin)


def analytic_sd(mix: Mixture, kernel: str) -> float:
    """sd(D_i) of the mixture at r = 2, by enumerating every answer of every type."""
    m1 = m2 = 0.0
    for qtype, weight in zip(mix.types, mix.weights, strict=True):
        key = fact_of if kernel == "semantic" else str
        for old in itertools.product(qtype.old.items(), repeat=R):
            for new in itertools.product(qtype.new.items(), repeat=R):
                p = weight * float(np.prod([x[1] for x in (*old, *new)]))
                a, b = [key(x[0]) for x in old], [key(x[0]) for x in new]
                d = (float(a[0] == a[1]) + float(b[0] == b[1])) / 2 - sum(
                    x == y for x in a for y in b) / R ** 2
                m1, m2 = m1 + p * d, m2 + p * d * d
    return float(np.sqrt(m2 - m1 * m1))


def look_data(values: np.ndarray, index: int) -> LookData:
    return LookData(values, KERNELS, Resampling(), R, 2000, index, "exact")


def first_decisive(decisions: Sequence[str], sizes: Sequence[int]) -> tuple[int, int]:
    """(decision code, questions used) of looks taken in order until one decides."""
    for decision, n in zip(decisions, sizes, strict=True):
        if decision in DECISIONS:
            return DECISIONS[decision], n
    return 0, sizes[-1]


def anytime_decisions(values: np.ndarray, sizes: Sequence[int], gate: GateConfig
                      ) -> tuple[list[str], list[str]]:
    """The gate at each look with the EB bounds, and with the betting tests as bounds."""
    margin = gate.margin_pp or 0.0
    lo, hi = lower_and_upper_d(values[None])
    up0 = betting_rejects(values[None], 0.0, above=True)
    below_m = betting_rejects(values[None], margin / 100, above=False)
    eb, bet = [], []
    for n in sizes:
        d_hat = {k: 100 * float(values[:n, c].mean()) for c, k in enumerate(KERNELS)}
        eb_stats = {k: {"d_hat": d_hat[k], "lcb95": 100 * lo[0, n - 1, c],
                        "ucb95": 100 * hi[0, n - 1, c]} for c, k in enumerate(KERNELS)}
        # a rejected test as a bound on the side it rejects: lcb above 0 / ucb below M
        bet_stats = {k: {"d_hat": d_hat[k], "lcb95": 1.0 if up0[0, n - 1, c] else -1.0,
                         "ucb95": margin - 1 if below_m[0, n - 1, c] else margin + 1}
                     for c, k in enumerate(KERNELS)}
        eb.append(evaluate(gate, eb_stats).verdict)
        bet.append(evaluate(gate, bet_stats).verdict)
    return eb, bet


# variants of the looks' bounds: (the pad, on every look or the interim ones only); "pair":
# D_i = -1 and +1 in one bootstrap for both bounds; "end": the upper bound over the questions
# plus D_i = +1, the lower one plus D_i = -1 (the package: "end" on every look, upper only)
VARIANTS = {"unpadded": (None, False), "pair, interim": ("pair", False),
            "pair, every look": ("pair", True), "end, interim": ("end", False),
            "end, every look": ("end", True)}


def variant_decisions(values: np.ndarray, gate: GateConfig, index: int
                      ) -> dict[str, list[str]]:
    """The gate at each look for every variant of :data:`VARIANTS`."""
    sizes = block_sizes(N, K)
    levels = nominal_levels([n / N for n in sizes], 0.05)
    one = np.ones((1, len(KERNELS)))
    out: dict[str, list[str]] = {name: [] for name in VARIANTS}
    for k, (n, level) in enumerate(zip(sizes, levels, strict=True), start=1):
        sub = values[:n]
        boots = {key: Resampling().intervals(v, 2000, index, method="exact", repeats=R)
                 for key, v in (("plain", sub), ("pair", np.vstack([sub, -one, one])),
                                ("lo", np.vstack([sub, -one])), ("hi", np.vstack([sub, one])))}
        for name, (pad, every) in VARIANTS.items():
            on = pad is not None and (k < K or every)
            hi_boot = boots[("pair" if pad == "pair" else "hi") if on else "plain"]
            lo_boot = boots[("pair" if pad == "pair" else "lo") if on else "plain"]
            stats = {kernel: {"d_hat": 100 * float(sub[:, c].mean()),
                              "lcb95": lo_boot.bounds(c, level, scale=100.0)[0],
                              "ucb95": hi_boot.bounds(c, level, scale=100.0)[1]}
                     for c, kernel in enumerate(KERNELS)}
            out[name].append(evaluate(gate, stats).verdict)
    return out


def run_audits(world: World, gate: GateConfig, start: int, stop: int, seed: int
               ) -> np.ndarray:
    """(audits, 2 * len(METHODS) + 2): per method the decision code and the questions
    used, then sd(D_i) of each kernel."""
    sizes = block_sizes(N, K)
    rows = []
    for index in range(start, stop):
        values = world.values(index, seed)
        seq = take_looks(look_data(values, index), gate, K, N)
        naive = [take_looks(look_data(values[:n], index), gate, 1, n).looks[0].decision
                 for n in sizes]
        eb, bet = anytime_decisions(values, sizes, gate)
        row = [DECISIONS.get(seq.looks[-1].decision, 0), seq.questions_used,
               *first_decisive(naive, sizes), DECISIONS.get(naive[-1], 0), N,
               *first_decisive(eb, sizes), *first_decisive(bet, sizes),
               *[x for v in variant_decisions(values, gate, index).values()
                 for x in first_decisive(v, sizes)],
               *values.std(axis=0, ddof=1)]
        rows.append(row)
    return np.array(rows, dtype=np.float64)


def same_as_analyze(case: Case, seed: int) -> bool:
    """Audit 0 of a case through ``analyze`` (rows, labels, looks = K) against the fast
    path."""
    world = case.world
    rows, labels = cohort_tables(simulate_cohort(world.mixture, N, R, world.rng(0, seed)))
    config = AnalysisConfig(old=OLD, new=NEW, gate=case.gate, looks=K, permutations=0,
                            draws=2000, seed=0)
    slow = analyze(rows, labels=labels, config=config).sequential
    fast = take_looks(look_data(world.values(0, seed), 0), case.gate, K, N,
                      calls_per_question=2 * R)
    return slow is not None and slow.to_json() == fast.to_json()


M = 5.0
# the intersection-union test's least favourable nulls hold one kernel at the null and the
# other far inside its claim (paraphrases move only the exact kernel)
CASES = (
    Case(World("study", 0.0), M, "incompatible", "type I"),
    Case(World("study", 0.0, 10.0), M, "incompatible", "type I, least favourable"),
    Case(World("study", M), M, "compatible", "type I at the margin"),
    Case(World("study", M + 0.5), M, "compatible", "type I"),
    Case(World("study", 0.0, M + 0.5), M, "compatible", "type I, least favourable"),
    Case(World("study", 0.0, M), M, "compatible", "type I, least favourable, at the margin"),
    Case(World("study", 10.0), M, "incompatible", "power"),
    Case(World("study", 6.0), M, "incompatible", "power at a moderate D"),
    Case(World("study", 0.0), M, "compatible", "power"),
    Case(World("rare", M), M, "compatible", "type I at the margin, rare churn"),
    Case(World("rare", 1.0), 1.0, "compatible", "type I at a 1 pp margin, rare churn"),
)


def canonical(paths: int, seed: int) -> tuple[float, float]:
    """P(crossing some look) under the canonical joint distribution (Brownian motion at the
    looks' information fractions), at the K-look boundaries and at 1.645 on every look."""
    t = np.array(block_sizes(N, K)) / N
    rng = np.random.Generator(np.random.PCG64([seed, 99]))
    steps = rng.standard_normal((paths, K)) * np.sqrt(np.diff(t, prepend=0.0))
    z = np.cumsum(steps, axis=1) / np.sqrt(t)
    return (float((z >= np.array(boundaries(list(t), 0.05))).any(axis=1).mean()),
            float((z >= ndtri(0.95)).any(axis=1).mean()))


def run_case(case: Case, audits: int, seed: int, workers: int) -> np.ndarray:
    spans = [(s, min(s + CHUNK, audits)) for s in range(0, audits, CHUNK)]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        parts = list(pool.map(run_audits, [case.world] * len(spans), [case.gate] * len(spans),
                              [s for s, _ in spans], [e for _, e in spans],
                              [seed] * len(spans)))
    return np.concatenate(parts)


def cell(out: np.ndarray, method: int, claim: str) -> str:
    hits = out[:, 2 * method] == DECISIONS[claim]
    used = out[:, 2 * method + 1] / N
    return (f"{Rate(int(hits.sum()), len(out))} / {100 * np.median(used):.0f}% "
            f"({100 * used.mean():.0f}%)")


def table(cases: Sequence[Case], results: Sequence[np.ndarray]) -> str:
    head = ["claim", "world", "true D exact / sem (pp)", "M (pp)",
            "sd(D_i) exact / sem, analytic (simulated)", "what", "group-sequential K = 8",
            "group-sequential: calls saved", "naive K = 8", "fixed n = 400", "EB CS K = 8",
            "betting K = 8", *(f"{v} K = 8" for v in VARIANTS)]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for case, out in zip(cases, results, strict=True):
        w, mix = case.world, case.world.mixture
        sds = (f"{analytic_sd(mix, 'exact'):.3f} / {analytic_sd(mix, 'semantic'):.3f} "
               f"({np.mean(out[:, -2]):.3f} / {np.mean(out[:, -1]):.3f})")
        cells = [cell(out, m, case.claim) for m in range(len(METHODS))]
        cells.insert(1, f"{100 * (1 - out[:, 1].mean() / N):.0f}%")
        lines.append(f"| {case.claim.upper()} | {w.kind} | {w.d_pp + w.paraphrase_pp:g} / "
                     f"{w.d_pp:g} | {case.margin:g} | {sds} | {case.what} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--audits", type=int, default=2000, help="simulated audits per row")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    start, load0 = time.perf_counter(), os.getloadavg()[0]
    checks = [same_as_analyze(c, args.seed) for c in CASES]
    runs: dict[tuple[World, float], np.ndarray] = {}  # a world and margin is run once
    for c in CASES:
        if (c.world, c.margin) not in runs:
            runs[(c.world, c.margin)] = run_case(c, args.audits, args.seed, args.workers)
    results = [runs[(c.world, c.margin)] for c in CASES]
    wall = time.perf_counter() - start
    print(f"## Sequential looks: {args.audits:,} audits per row, n = {N}, r = {R}, K = {K} "
          f"(blocks of {N // K}), seed {args.seed}\n")
    print(f"Each cell: the share of audits that reached the row's claim ± its binomial SE / "
          f"the median (mean) share of the {N} questions used, over all audits; calls saved: "
          f"1 - the mean share (answer calls are proportional to questions). "
          f"{wall:.0f} s wall, {args.workers} workers, load average {load0:.1f} at the start "
          f"and {os.getloadavg()[0]:.1f} at the end.\n")
    print(table(CASES, results))
    print(f"\nanalyze() on audit 0 of each row gives the same looks: {all(checks)} "
          f"({sum(checks)} of {len(checks)})")
    obf, naive = canonical(400_000, args.seed)
    print(f"\nThe canonical joint distribution (400,000 paths): the K = {K} boundaries are "
          f"crossed in {100 * obf:.2f}%, 1.645 at every look in {100 * naive:.2f}%.")


if __name__ == "__main__":
    main()
