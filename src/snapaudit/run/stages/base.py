"""A stage as one typed object, and the one way to execute it.

A :class:`Stage` is its ledger name, its cells and the priced model its cells call; a
:class:`Cell` is its typed key (:mod:`snapaudit.run.stages.keys`), the endpoint it calls (the
executor paces and breaks circuits per endpoint without reading keys), its secret-free
request (hashed into each attempt row), its synchronous call (which validates the reply and
returns the payload with the tokens it used) and, where the cell can go through a provider
batch, its batch call. The payloads are decoded back into typed rows by the stage modules
(``answer_rows``, ``labels_of_stage``, ``locked_evidence``). :func:`run_stage` runs any
stage: through the batch driver when the run asks for batches and every cell has a batch
call, else synchronously (``run_cells``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from snapaudit.errors import ConfigError
from snapaudit.progress import Progress
from snapaudit.run.execution.batch import BatchDriver
from snapaudit.run.execution.breaker import breaker_policy
from snapaudit.run.execution.runner import (
    BatchCall,
    CellResult,
    CellTask,
    RetryPolicy,
    StageSummary,
    run_cells,
)
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.stages.keys import (
    AnswerKey,
    AttributionJudgeKey,
    AttributionKey,
    JudgeKey,
    RetrievalKey,
)
from snapaudit.systems.config import RunConfig

K = TypeVar("K", AnswerKey, RetrievalKey, JudgeKey, AttributionKey, AttributionJudgeKey)
MODEL_META = "model:"  # ledger meta key prefix: the priced model of a stage (usage)


@dataclass(frozen=True, slots=True)
class Cell(Generic[K]):
    """One cell of a stage; ``call(attempt_no, seed)`` makes one attempt (TransportInvalid
    on a retryable failure), ``batch`` is the same cell as one request of a provider batch.
    ``endpoint``: the endpoint it calls, as :func:`~snapaudit.run.stages.keys.endpoint_of`
    names it (a state's own system); None: the stage's one endpoint."""

    key: K
    request: dict[str, Any]
    call: Callable[[int, int], Awaitable[CellResult]]
    batch: BatchCall | None = None
    endpoint: str | None = None

    def task(self) -> CellTask:
        return CellTask(self.key.encode(), self.request, self.call, self.batch, self.endpoint)


@dataclass(frozen=True, slots=True)
class Stage(Generic[K]):
    """A ledger stage and its cells, in schedule order. ``batchable``: the stage may go
    through provider batches (``[run] mode = "batch"``) when every cell has a batch call.
    ``model``: the model id its cells are billed for (``[run.pricing]``; None: unpriced)."""

    name: str
    cells: Sequence[Cell[K]]
    batchable: bool = True
    model: str | None = None

    def can_batch(self, run: RunConfig | None) -> bool:
        return (self.batchable and run is not None and run.mode == "batch" and bool(self.cells)
                and all(c.batch is not None for c in self.cells))


async def run_stage(ledger: Ledger, stage: Stage[Any], policy: RetryPolicy, progress: Progress,
                    run: RunConfig | None = None) -> StageSummary:
    """Run ``stage``'s cells not yet accepted: the batch driver when ``run.mode = "batch"``
    and every cell can go through a provider batch, else ``run_cells``. A stage with
    batches still open resumes in batch mode only. The stage's model is recorded in the
    ledger first, so its tokens are priced afterwards (:func:`recorded_models`)."""
    tasks = [c.task() for c in stage.cells]
    if stage.model is not None and ledger.get_meta(MODEL_META + stage.name) != stage.model:
        ledger.set_meta(MODEL_META + stage.name, stage.model)
    if stage.can_batch(run):
        assert run is not None
        return await BatchDriver(ledger, stage.name, tasks, policy, progress, run).run()
    still_open = ledger.batches(stage.name, open_only=True)
    if still_open:
        raise ConfigError(f"stage {stage.name} has {len(still_open)} provider batch(es) still "
                          "open; resume it with [run] mode = \"batch\" (--set run.mode=batch)")
    return await run_cells(ledger, stage.name, tasks, policy, progress)


def recorded_models(ledger: Ledger) -> dict[str, str]:
    """Stage -> the model its cells were billed for, as :func:`run_stage` recorded it."""
    return {key.removeprefix(MODEL_META): value for key, value in ledger.meta_items(MODEL_META)}


def retry_policy(run: RunConfig, design_seed: int, rate_limited: bool = True,
                 secrets: Iterable[str] = ()) -> RetryPolicy:
    """The retry policy of ``[run]`` (HTTP systems apply the rate limit per endpoint);
    ``secrets``: the run's (``RunResources.secrets``), masked in the errors it records."""
    return RetryPolicy(concurrency=run.concurrency,
                       rate_limit_per_s=run.rate_limit_per_s if rate_limited else None,
                       max_attempts=run.max_attempts, backoff_base_s=run.backoff_base_s,
                       backoff_max_s=run.backoff_max_s, design_seed=design_seed,
                       max_retry_after_s=run.max_retry_after_s, breaker=breaker_policy(run),
                       secrets=secrets)
