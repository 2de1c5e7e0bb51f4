"""The context every stage of a run receives: protocol, run directory, systems, lock chain."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from snapaudit.progress import Progress
from snapaudit.run.execution.breaker import breaker_policy
from snapaudit.run.execution.runner import RetryPolicy
from snapaudit.run.record import cohort
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.locks import LockRecord, LockStage, content_key, make_lock
from snapaudit.run.record.protocol import Protocol
from snapaudit.run.record.rundir import RunDir
from snapaudit.systems.base import System
from snapaudit.systems.resources import RunResources


@dataclass
class RunContext:
    protocol: Protocol
    rd: RunDir
    base_dir: Path
    progress: Progress
    questions: list[cohort.Question]
    systems: dict[str, System]
    depends: dict[str, str]
    chain: list[LockRecord]
    # the run's replica pools and shared generators (the judge's too), closed when it ends
    resources: RunResources = field(default_factory=RunResources)
    # False for the blocks of a sequential design: their stages run without locking (a
    # look lock follows each block; the stage locks close every question used at the end)
    locking: bool = True

    @property
    def judge_stage(self) -> str:
        return f"judge:{self.protocol.judge.name}"

    def policy(self, rate_limited: bool = True) -> RetryPolicy:
        """Retry policy from [run]; HTTP systems apply the rate limit per endpoint instead."""
        r = self.protocol.run
        rate = r.rate_limit_per_s if rate_limited else None
        return RetryPolicy(r.concurrency, rate, r.max_attempts,
                           r.backoff_base_s, r.backoff_max_s, self.protocol.design.seed,
                           r.max_retry_after_s, breaker_policy(r), self.resources.secrets)

    def locked(self, stage: str) -> bool:
        return any(rec.stage == stage for rec in self.chain)

    def lock(self, stage: LockStage, content: Mapping[str, str]) -> None:
        if not self.locking:
            return
        record, digest = make_lock(stage, self.depends, content, self.chain)
        # the row's stage is unique in the ledger: a look's is "look:K"
        self.ledger.add_lock(record.seq, content_key(record), record.model_dump(mode="json"),
                             digest)
        self.chain.append(record)
        self.progress.info(f"locked {stage} ({digest[:12]})")

    @property
    def ledger(self) -> Ledger:
        return self.rd.ledger()
