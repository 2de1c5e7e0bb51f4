"""The clustered world of the calibration study."""

from __future__ import annotations

import numpy as np
import pytest

from snapaudit.stats.cluster_sim import ClusterCell, run_cluster_cohorts, simulate_clustered
from snapaudit.stats.simulate import standard_mixture


def test_rho_one_shares_the_cluster_type_and_marginals_hold() -> None:
    mix = standard_mixture(6.0)
    rng = np.random.Generator(np.random.PCG64(0))
    cohort, groups = simulate_clustered(mix, 400, 2, 1.0, rng)
    sizes = np.bincount(groups)
    assert sizes.min() >= 5 and sizes.max() <= 20 and cohort.n == groups.size
    for g in range(400):
        assert len(set(cohort.types[groups == g].tolist())) == 1
    free, _ = simulate_clustered(mix, 2000, 2, 0.0, np.random.Generator(np.random.PCG64(1)))
    share = np.bincount(free.types, minlength=len(mix.weights)) / free.n
    assert share == pytest.approx(np.array(mix.weights), abs=0.01)


def test_cluster_cohorts_are_seeded_and_record_coverage() -> None:
    cell = ClusterCell(20, 2, 6.0, 0.5, cohorts=4, draws=200)
    first = run_cluster_cohorts(cell, 0, 2)
    assert np.array_equal(first, run_cluster_cohorts(cell, 0, 2))
    assert first.shape == (2, 2, 6)
    assert set(np.unique(first[:, :, 2:])) <= {0.0, 1.0}
    assert np.all(first[:, :, 0] >= 100) and np.all(first[:, :, 0] <= 400)
