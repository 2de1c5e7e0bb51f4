"""Bootstraps started early in worker threads and taken where the analysis needs them.

Only the bootstraps that still need draws are started here: the gold flip rates (ratios) and
utility deltas (F1 is not on a grid; EM is drawn jointly with it), and the judge agreement.
The kernels' and the ladder's are exact (:mod:`snapaudit.stats.exact`) and computed inline.

``numpy.random.Generator.multinomial`` releases the GIL while it draws, so a bootstrap running
in a worker thread uses the second core while the main thread computes the diagnostics, and
two of them use both cores while the main thread waits for one (the analysis runs two
workers: at 10^5 questions x 5 repeats the judge agreement's draws alone outlast the main
thread's work). Every
bootstrap still builds its own ``Generator(PCG64(seed))`` from the analysis seed and consumes
it exactly as when it runs inline: the draws, and so the results, are the same bytes.

A bootstrap is only started when its inputs are known to be valid (an input error must be
raised where the sequential analysis raises it); :meth:`Prefetch.take` returns ``None`` for a
bootstrap never started, and the caller then computes it inline as before.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np

from snapaudit.stats.agreement import per_question_counts
from snapaudit.stats.bootstrap import BootstrapDraws
from snapaudit.stats.cluster import Resampling
from snapaudit.stats.fliprates import category_values
from snapaudit.stats.utility import GoldScores, paired_values
from snapaudit.tables import PairLabel


class Prefetch:
    """Named bootstraps running in the pool's worker threads (started in order)."""

    def __init__(self, pool: ThreadPoolExecutor | None = None) -> None:
        self._pool = pool
        self._started: dict[str, Future[BootstrapDraws]] = {}

    def start(self, name: str, resampling: Resampling, values: np.ndarray, draws: int,
              seed: int) -> None:
        """Start ``resampling.bootstrap(values, draws, seed)`` in the worker (no-op without one)."""
        if self._pool is not None:
            self._started[name] = self._pool.submit(resampling.bootstrap, values, draws, seed)

    def take(self, name: str) -> BootstrapDraws | None:
        """The draws of bootstrap ``name`` (waits for it), or None when it was not started."""
        started = self._started.pop(name, None)
        return None if started is None else started.result()


def start_gold(early: Prefetch, scores: GoldScores, res: Resampling, draws: int,
               seed: int) -> None:
    """Start the bootstraps of the flip rates and of the utility deltas."""
    early.start("flip_rates", res, category_values(scores), draws, seed)
    early.start("utility_delta", res, paired_values(scores), draws, seed)


def start_agreement(early: Prefetch, labels: Sequence[PairLabel], pair: tuple[str, str],
                    draws: int, seed: int) -> np.ndarray:
    """Start the bootstrap of the two judges' per-question counts (always over questions);
    returns the counts."""
    counts = per_question_counts(labels, *pair)
    if counts.shape[0]:
        early.start("agreement", Resampling(), counts, draws, seed)
    return counts
