"""The statistics beside the gate (docs/analysis.md, "Beyond D"), wired in one place.

Flip rates against gold and paired utility deltas (with gold), the stratified permutation
test of equal answer distributions, and Holm-adjusted ladder p-values. Every interval here
resamples the same unit as the kernels' bootstrap (questions, or clusters when the answer
rows name them) with the analysis seed. None of it feeds the gate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from snapaudit.stats.bootstrap import Method
from snapaudit.stats.cluster import Resampling
from snapaudit.stats.fliprates import FlipRates, flip_rates
from snapaudit.stats.kernels import AnswerGrid, Kernel
from snapaudit.stats.metrics import GoldCells
from snapaudit.stats.multiplicity import Multiplicity, ladder_holm
from snapaudit.stats.normalize import Normalizer
from snapaudit.stats.permutation import DistributionTest, distribution_test
from snapaudit.stats.prefetch import Prefetch
from snapaudit.stats.utility import Delta, gold_scores, utility_delta


@dataclass(frozen=True)
class Secondary:
    resampling: Resampling
    flip_rates: FlipRates | None = None
    utility_delta: Mapping[str, Delta] | None = None
    distribution: DistributionTest | None = None
    multiplicity: Multiplicity | None = None


def secondary(grid: AnswerGrid, kernels: Mapping[str, Kernel], main: Kernel, *,
              resampling: Resampling, old: str, new: str, draws: int, seed: int,
              permutations: int, gold: Mapping[str, Sequence[str]] | None,
              normalize: Normalizer, deltas: tuple[float, float] | None,
              ladder: Sequence[str] | None, cells: Mapping[str, GoldCells] | None = None,
              prefetch: Prefetch | None = None, method: Method = "exact") -> Secondary:
    """``cells``: the gold scores of old and new if already computed; ``prefetch``: the
    bootstraps ``flip_rates`` and ``utility_delta`` and the permutation tests if already
    started; ``method``: of the
    EM delta and the ladder's steps (flip rates and the F1 delta are always drawn)."""
    early = prefetch or Prefetch()
    fr = ud = None
    if gold is not None:
        scores = gold_scores(grid, gold, normalize, old, new, cells)
        fr = flip_rates(scores, resampling, draws, seed, early.take("flip_rates"))
        ud = utility_delta(scores, resampling, draws, seed, deltas, early.take("utility_delta"),
                           method=method)
    dist = (distribution_test(dict(kernels), grid, old, new, permutations, seed,
                              early.take_permutations(list(kernels)))
            if permutations > 0 else None)
    mult = (ladder_holm(main, grid, ladder, old, new, resampling, draws, seed,
                        method=method) if ladder else None)
    return Secondary(resampling, fr, ud, dist, mult)

