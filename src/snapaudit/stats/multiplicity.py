"""Holm-adjusted p-values across the ladder's adjacent steps and its endpoints (secondary).

Each test of the family asks whether a step's D exceeds 0; its p-value is the bootstrap's
P(D <= 0) (``p_nonpositive``) of that step under the main kernel (semantic when labels are
given, else exact), all steps resampled jointly (the same questions or clusters for every
step, seed of the analysis). The endpoints (old -> new) join the family unless they are
one of the adjacent steps. Holm's step-down adjustment controls the family-wise error rate
under any dependence: with p sorted ascending, adj_(k) = max_{j <= k} min(1, (m - j + 1) p_(j)).
Marked secondary: the gate never reads them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from snapaudit.stats.bootstrap import Bootstrapped, Method
from snapaudit.stats.churn import per_question
from snapaudit.stats.cluster import Resampling
from snapaudit.stats.kernels import AnswerGrid, Kernel


def holm(pvalues: Sequence[float]) -> list[float]:
    """Holm step-down adjusted p-values, in the input order."""
    p = np.asarray(pvalues, dtype=np.float64)
    m = p.size
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, (m - np.arange(m)) * p[order])
    adjusted = np.empty(m)
    adjusted[order] = np.maximum.accumulate(scaled)
    return [float(x) for x in adjusted]


@dataclass(frozen=True, slots=True)
class Test:
    old: str
    new: str
    kind: str           # "step" or "endpoints"
    d_hat: float
    p_nonpositive: float
    p_holm: float
    method: str = "draws"  # of p_nonpositive: "exact" or "draws"

    def to_json(self) -> dict[str, object]:
        return {"old": self.old, "new": self.new, "kind": self.kind, "d_hat": self.d_hat,
                "p_nonpositive": self.p_nonpositive, "p_holm": self.p_holm,
                "method": self.method}


@dataclass(frozen=True)
class Multiplicity:
    kernel: str
    tests: tuple[Test, ...]

    def to_json(self) -> dict[str, object]:
        return {"method": "holm", "role": "secondary", "kernel": self.kernel,
                "source": "p_nonpositive", "tests": [t.to_json() for t in self.tests]}


def ladder_family(states: Sequence[str], old: str, new: str) -> list[tuple[str, str, str]]:
    family = [(a, b, "step") for a, b in pairwise(states)]
    if (old, new) not in {(a, b) for a, b, _ in family}:
        family.append((old, new, "endpoints"))
    return family


def ladder_values(kernel: Kernel, grid: AnswerGrid, states: Sequence[str], old: str,
                  new: str) -> np.ndarray:
    """(n, tests) per-question D of every test of the family, the columns bootstrapped."""
    family = ladder_family(states, old, new)
    return np.column_stack([per_question(grid, kernel, a, b).d for a, b, _ in family])


def ladder_holm(kernel: Kernel, grid: AnswerGrid, states: Sequence[str], old: str, new: str,
                resampling: Resampling, draws: int, seed: int,
                boot: Bootstrapped | None = None, *, method: Method = "exact") -> Multiplicity:
    """The family's tests; ``boot``: the bootstrap of :func:`ladder_values`, if already drawn,
    else computed with ``method`` (exact: each step's exact bootstrap)."""
    family = ladder_family(states, old, new)
    if boot is None:
        boot = resampling.intervals(ladder_values(kernel, grid, states, old, new), draws, seed,
                                    method=method, repeats=grid.repeats)
    ivs = [boot.summary(col, scale=100.0) for col in range(len(family))]
    adjusted = holm([iv.p_nonpositive for iv in ivs])
    return Multiplicity(kernel.name, tuple(
        Test(a, b, kind, iv.point, iv.p_nonpositive, adj, iv.method)
        for (a, b, kind), iv, adj in zip(family, ivs, adjusted, strict=True)))
