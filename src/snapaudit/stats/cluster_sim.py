"""A clustered world for the calibration: questions in clusters whose types are correlated.

G clusters of 5-20 questions (sizes uniform). Each cluster draws one question type from the
mixture; each of its questions takes the cluster's type with probability ``rho`` and otherwise
draws its own, so every question's type still has the mixture's distribution (the population
D is the mixture's true D) while questions of a cluster resemble each other: two questions of
a cluster share a type draw with probability rho^2. The intra-cluster correlation of D_i this
gives is measured (one-way ANOVA, :func:`snapaudit.stats.cluster.icc_anova`) and reported.

:func:`run_cluster_cohorts` audits each cohort twice, with the question bootstrap and with the
cluster bootstrap (exact and semantic kernels jointly), and records whether each interval
covers the true D.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from snapaudit.stats.bootstrap import whole_question_bootstrap
from snapaudit.stats.cluster import cluster_bootstrap, icc_anova
from snapaudit.stats.simulate import Cohort, Mixture, cohort_values, fact_of, standard_mixture

SIZES = (5, 20)


def simulate_clustered(mixture: Mixture, clusters: int, repeats: int, rho: float,
                       rng: np.random.Generator) -> tuple[Cohort, np.ndarray]:
    """One clustered cohort and each question's cluster index."""
    size = rng.integers(SIZES[0], SIZES[1] + 1, size=clusters)
    groups = np.repeat(np.arange(clusters), size)
    w = np.asarray(mixture.weights)
    own = rng.choice(len(w), size=groups.size, p=w)
    shared = rng.choice(len(w), size=clusters, p=w)
    types = np.where(rng.random(groups.size) < rho, shared[groups], own)
    vocab = sorted({a for t in mixture.types for d in (t.old, t.new) for a in d})
    code = {a: i for i, a in enumerate(vocab)}
    facts = sorted({fact_of(a) for a in vocab})
    fact_code = np.array([facts.index(fact_of(a)) for a in vocab])
    old = np.empty((groups.size, repeats), dtype=np.int64)
    new = np.empty((groups.size, repeats), dtype=np.int64)
    for t, qtype in enumerate(mixture.types):
        rows = np.flatnonzero(types == t)
        for out, dist in ((old, qtype.old), (new, qtype.new)):
            answers = np.array([code[a] for a in dist])
            out[rows] = answers[rng.choice(len(answers), size=(rows.size, repeats),
                                           p=np.array(list(dist.values())))]
    return Cohort(types, old, new, fact_code[old], fact_code[new], tuple(vocab)), groups


@dataclass(frozen=True)
class ClusterCell:
    clusters: int
    repeats: int
    d_pp: float
    rho: float
    cohorts: int = 1000
    draws: int = 2000
    seed: int = 0

    @property
    def mixture(self) -> Mixture:
        return standard_mixture(self.d_pp)

    def cohort(self, index: int) -> tuple[Cohort, np.ndarray, int]:
        ss = np.random.SeedSequence([self.seed, 31, self.clusters, self.repeats,
                                     round(1000 * self.d_pp), round(1000 * self.rho), index])
        rng = np.random.Generator(np.random.PCG64(ss))
        cohort, groups = simulate_clustered(self.mixture, self.clusters, self.repeats,
                                            self.rho, rng)
        return cohort, groups, int(ss.generate_state(1, dtype=np.uint32)[0])


COLUMNS = ("n", "icc", "q_lcb", "q_ci", "c_lcb", "c_ci")


def run_cluster_cohorts(cell: ClusterCell, start: int, stop: int) -> np.ndarray:
    """(cohorts, 2, 6): per kernel (exact, semantic) the questions, the ICC of D_i, and
    whether the question bootstrap's LCB / 95% CI and the cluster bootstrap's cover D."""
    true = np.array([100 * cell.mixture.true_d(k) for k in ("exact", "semantic")])
    out = np.empty((stop - start, 2, len(COLUMNS)))
    for row, index in enumerate(range(start, stop)):
        cohort, groups, seed = cell.cohort(index)
        values = cohort_values(cohort)
        by_question = whole_question_bootstrap(values, cell.draws, seed)
        by_cluster = cluster_bootstrap(values, groups, cell.draws, seed)
        for col in range(2):
            q = by_question.summary(col, scale=100.0)
            c = by_cluster.summary(col, scale=100.0)
            t = true[col]
            out[row, col] = (values.shape[0], icc_anova(values[:, col], groups),
                             q.lcb95 <= t + 1e-9, q.ci95[0] <= t + 1e-9 <= q.ci95[1] + 2e-9,
                             c.lcb95 <= t + 1e-9, c.ci95[0] <= t + 1e-9 <= c.ci95[1] + 2e-9)
    return out
