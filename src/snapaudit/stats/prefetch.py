"""Draws started early in worker threads and taken where the analysis needs them.

Only the Monte Carlo work that still needs draws is started here: the judge agreement (its
per-question counts too), the gold flip rates (ratios) and utility deltas (F1 is not on a
grid; EM is drawn jointly with it), and the permutation test of each kernel. The kernels' and
the ladder's bootstraps are exact (:mod:`snapaudit.stats.exact`) and computed inline.

``numpy.random.Generator.multinomial`` (and the matrix products after it) release the GIL, so
the draws in the two worker threads use both cores while the main thread computes the
diagnostics. The judge agreement is the longest (at 10^5 questions x 5 repeats its counts take
~720 distinct rows: 50,000 draws x 720 binomials, ~4 s), so it is started first, as soon as the
labels are validated, and taken last; the rest queue on the second worker, and the main
thread runs a queued permutation test itself rather than wait for it. Every bootstrap
still builds its own ``Generator(PCG64(seed))`` from the analysis seed (the permutation test
its own stream) and consumes it exactly as when it runs inline: the draws, and so the results,
are the same bytes.

Work is only started when its inputs are known to be valid (an input error must be raised
where the sequential analysis raises it); a ``take`` returns ``None`` for work never started
(no pool), and the caller then computes it inline as before.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any, cast

import numpy as np

from snapaudit.stats.agreement import JudgeAgreement, agreement, per_question_counts
from snapaudit.stats.bootstrap import BootstrapDraws
from snapaudit.stats.cluster import Resampling
from snapaudit.stats.fliprates import category_values
from snapaudit.stats.kernels import AnswerGrid, Kernel
from snapaudit.stats.permutation import PermutationResult, permutation_test, same_matrices
from snapaudit.stats.utility import GoldScores, paired_values
from snapaudit.tables import PairLabel

AgreementDraws = tuple[np.ndarray, BootstrapDraws | None]


class Prefetch:
    """Named work running in the pool's worker threads (started in order).

    Work submitted as ``stealable`` that no worker has started yet when the main thread would
    wait is run by the main thread itself (the same call, so the same result)."""

    def __init__(self, pool: ThreadPoolExecutor | None = None) -> None:
        self._pool = pool
        self._started: dict[str, tuple[Future[Any], Callable[[], Any] | None]] = {}

    @property
    def pooled(self) -> bool:
        """Whether work is started in worker threads (else every ``take`` is None)."""
        return self._pool is not None

    def submit(self, name: str, work: Callable[..., Any], *args: Any,
               stealable: bool = False) -> None:
        """Start ``work(*args)`` in a worker (no-op without a pool)."""
        if self._pool is not None:
            call = partial(work, *args)
            self._started[name] = (self._pool.submit(call), call if stealable else None)

    def start(self, name: str, resampling: Resampling, values: np.ndarray, draws: int,
              seed: int) -> None:
        """Start ``resampling.bootstrap(values, draws, seed)`` in the worker (no-op without one)."""
        self.submit(name, resampling.bootstrap, values, draws, seed)

    def _result(self, name: str) -> Any:
        entry = self._started.pop(name, None)
        if entry is None:
            return None
        future, call = entry
        if call is not None and future.cancel():  # not started: run here rather than wait
            return call()
        while not future.done() and self._steal():
            pass
        return future.result()

    def _steal(self) -> bool:
        """Run here the last queued stealable work that no worker has started (its result,
        or its error, kept for its ``take``); False when there is none."""
        for name in reversed(list(self._started)):
            future, call = self._started[name]
            if call is not None and future.cancel():
                done: Future[Any] = Future()
                try:
                    done.set_result(call())
                except Exception as exc:  # raised at its take, as from a worker
                    done.set_exception(exc)
                self._started[name] = (done, None)
                return True
        return False

    def take(self, name: str) -> BootstrapDraws | None:
        """The draws of bootstrap ``name`` (waits for it), or None when it was not started."""
        return cast("BootstrapDraws | None", self._result(name))

    def take_agreement(self) -> AgreementDraws | None:
        """:func:`start_agreement`'s counts and their draws (None: no rows), or None when it
        was not started."""
        return cast("AgreementDraws | None", self._result("agreement"))

    def take_permutations(self, names: Sequence[str]) -> dict[str, PermutationResult]:
        """The permutation tests of ``names`` started by :func:`start_permutations`."""
        done = {name: self._result(f"permutation:{name}") for name in names}
        return {name: cast(PermutationResult, r) for name, r in done.items() if r is not None}


def start_gold(early: Prefetch, scores: GoldScores, res: Resampling, draws: int,
               seed: int) -> None:
    """Start the bootstraps of the flip rates and of the utility deltas."""
    early.start("flip_rates", res, category_values(scores), draws, seed)
    early.start("utility_delta", res, paired_values(scores), draws, seed)


def start_agreement(early: Prefetch, labels: Sequence[PairLabel], pair: tuple[str, str],
                    draws: int, seed: int) -> None:
    """Start the two judges' per-question counts and their bootstrap (always over questions)."""
    early.submit("agreement", _agreement_draws, labels, pair, draws, seed)


def _agreement_draws(labels: Sequence[PairLabel], pair: tuple[str, str], draws: int,
                     seed: int) -> AgreementDraws:
    counts = per_question_counts(labels, *pair)
    boot = Resampling().bootstrap(counts, draws, seed) if counts.shape[0] else None
    return counts, boot


def judge_agreement(early: Prefetch, labels: Sequence[PairLabel], pair: tuple[str, str],
                    d_hat: Mapping[str, float | None], draws: int, seed: int
                    ) -> JudgeAgreement | None:
    """:func:`snapaudit.stats.agreement.agreement` with the counts and draws of
    :func:`start_agreement` (computed here when it was not started). Raises nothing, so the
    analysis takes it last."""
    done = early.take_agreement()
    counts, boot = done if done is not None else (None, None)
    return agreement(labels, *pair, d_hat, draws, seed, counts, boot)


def start_permutations(early: Prefetch, kernels: Mapping[str, Kernel], grid: AnswerGrid,
                       old: str, new: str, permutations: int, seed: int) -> None:
    """Start the permutation test of each kernel (its same bits computed here, in order;
    only after the kernels' per-question values raised nothing)."""
    if permutations > 0 and early.pooled:
        for name, kernel in kernels.items():
            early.submit(f"permutation:{name}", permutation_test,
                         same_matrices(kernel, grid, old, new), grid.repeats, permutations,
                         seed, stealable=True)
