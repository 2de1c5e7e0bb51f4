"""Calibration by simulation: interval coverage, gate false-pass rate and power.

A :class:`Cell` fixes the cohort size n, the repeats r and the mixture (its true D). Each
simulated cohort is drawn from its own seed, its per-question D_i of both kernels are computed
(:func:`snapaudit.stats.simulate.cohort_values`, bit-identical to the analysis), and the real
bootstrap (the cell's ``method``: exact, :mod:`snapaudit.stats.exact`, as the analysis by
default, or draws, :func:`snapaudit.stats.bootstrap.whole_question_bootstrap`, both kernels
jointly) and the real gate (:func:`snapaudit.stats.gate.evaluate`, default rules) are
applied. A cohort covers the truth when ``lcb95 <= D`` (one-sided) and when
``lo <= D <= hi`` (two-sided). :func:`check_cohort` reruns one cohort through
:func:`snapaudit.stats.analysis.analyze` and returns whether every number agrees exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import partial

import numpy as np

from snapaudit.stats.analysis import AnalysisConfig, analyze
from snapaudit.stats.bootstrap import Bootstrapped, Method, whole_question_bootstrap
from snapaudit.stats.exact import exact_intervals
from snapaudit.stats.gate import GateConfig, evaluate
from snapaudit.stats.simulate import (
    NEW,
    OLD,
    Cohort,
    Mixture,
    cohort_tables,
    cohort_values,
    simulate_cohort,
    standard_mixture,
)

KERNELS = ("exact", "semantic")


@dataclass(frozen=True)
class Cell:
    """One simulation setting; every cohort of it has its own derived seed."""

    n: int
    repeats: int
    d_pp: float
    paraphrase_pp: float = 0.0
    cohorts: int = 1000
    draws: int = 2000
    seed: int = 0
    method: Method = "exact"  # of the bootstrap (``draws`` is unused by "exact")

    @property
    def mixture(self) -> Mixture:
        return standard_mixture(self.d_pp, self.paraphrase_pp)

    def true_d_pp(self, kernel: str) -> float:
        return 100 * self.mixture.true_d(kernel)

    def cohort_seed(self, index: int) -> np.random.SeedSequence:
        return np.random.SeedSequence([self.seed, self.n, self.repeats,
                                       round(1000 * self.d_pp), round(1000 * self.paraphrase_pp),
                                       index])

    def cohort(self, index: int) -> tuple[Cohort, int]:
        """Cohort ``index`` and the seed of its bootstrap."""
        ss = self.cohort_seed(index)
        rng = np.random.Generator(np.random.PCG64(ss))
        boot_seed = int(ss.generate_state(1, dtype=np.uint32)[0])
        return simulate_cohort(self.mixture, self.n, self.repeats, rng), boot_seed


@dataclass(frozen=True)
class Outcomes:
    """Per-cohort results (pp), arrays of shape (cohorts, 2) for kernels exact, semantic."""

    d_hat: np.ndarray
    lcb95: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    passed: np.ndarray

    @staticmethod
    def concat(parts: list[Outcomes]) -> Outcomes:
        return Outcomes(*(np.concatenate([getattr(p, f) for p in parts])
                          for f in ("d_hat", "lcb95", "lo", "hi", "passed")))


def run_cohorts(cell: Cell, start: int, stop: int) -> Outcomes:
    """Simulate and audit cohorts ``start``..``stop - 1`` of ``cell``."""
    gate = GateConfig()
    rows = []
    for index in range(start, stop):
        cohort, boot_seed = cell.cohort(index)
        values = cohort_values(cohort)
        draw = partial(whole_question_bootstrap, values, cell.draws, boot_seed)
        boot: Bootstrapped = (exact_intervals(values, cell.repeats, draw)
                              if cell.method == "exact" else draw())
        ivs = [boot.summary(col, scale=100.0) for col in range(len(KERNELS))]
        stats = {k: {"d_hat": iv.point, "lcb95": iv.lcb95} for k, iv in zip(KERNELS, ivs,
                                                                             strict=True)}
        passed = evaluate(gate, stats).passed
        rows.append(([iv.point for iv in ivs], [iv.lcb95 for iv in ivs],
                     [iv.ci95[0] for iv in ivs], [iv.ci95[1] for iv in ivs], passed))
    return Outcomes(*(np.array([r[f] for r in rows]) for f in range(5)))


@dataclass(frozen=True)
class Rate:
    """A Monte-Carlo proportion with its binomial standard error."""

    hits: int
    total: int

    @property
    def value(self) -> float:
        return self.hits / self.total

    @property
    def se(self) -> float:
        return math.sqrt(self.value * (1 - self.value) / self.total)

    def __str__(self) -> str:
        return f"{100 * self.value:5.1f}% ± {100 * self.se:.1f}"


@dataclass(frozen=True)
class CellSummary:
    cell: Cell
    true_d_pp: tuple[float, float]
    mean_d_hat: tuple[float, float]
    lcb_coverage: tuple[Rate, Rate]
    ci_coverage: tuple[Rate, Rate]
    gate_pass: Rate


def summarize_cell(cell: Cell, out: Outcomes) -> CellSummary:
    true = np.array([cell.true_d_pp(k) for k in KERNELS])
    tol = 1e-9
    total = int(out.passed.shape[0])
    lcb = (out.lcb95 <= true + tol).sum(axis=0)
    ci = ((out.lo <= true + tol) & (out.hi >= true - tol)).sum(axis=0)
    return CellSummary(cell, (float(true[0]), float(true[1])),
                       tuple(float(x) for x in out.d_hat.mean(axis=0)),  # type: ignore[arg-type]
                       (Rate(int(lcb[0]), total), Rate(int(lcb[1]), total)),
                       (Rate(int(ci[0]), total), Rate(int(ci[1]), total)),
                       Rate(int(out.passed.sum()), total))


def check_cohort(cell: Cell, index: int) -> bool:
    """Whether :func:`analyze` on cohort ``index`` gives the numbers of the fast path: the same
    D_i and bootstrap bounds bit for bit, D-hat up to float summation order, the same gate."""
    cohort, boot_seed = cell.cohort(index)
    rows, labels = cohort_tables(cohort)
    result = analyze(rows, labels=labels,
                     config=AnalysisConfig(old=OLD, new=NEW, draws=cell.draws, seed=boot_seed,
                                           bootstrap=cell.method))
    values = cohort_values(cohort)
    fast = run_cohorts(cell, index, index + 1)
    for col, kernel in enumerate(KERNELS):
        ks = result.kernels[kernel]
        same = (np.array_equal(result.per_question[kernel].d, values[:, col])
                and abs(ks.d_hat - fast.d_hat[0, col]) < 1e-9
                and (ks.lcb95, *ks.ci95) == (fast.lcb95[0, col], fast.lo[0, col],
                                            fast.hi[0, col]))
        if not same:
            return False
    return bool(result.gate.passed == fast.passed[0])
