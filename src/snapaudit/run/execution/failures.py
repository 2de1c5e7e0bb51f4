"""Failed attempts of one stage: reasons by count, the last error per endpoint, fail fast.

The endpoint of a failure is the one its cell names (``CellTask.endpoint``); cell keys are
opaque here.

**Fail fast.** When a stage has no accepted cell yet (in this invocation or an earlier one)
and the last :data:`FAIL_FAST_FAILURES` failures carry one identical error (same reason
and same detail, e.g. HTTP 500 with the same body), and at least :data:`FAIL_FAST_CELLS`
different cells among them failed that way on a retry too (the same error on their
first and a later attempt of this invocation), the stage stops with
:class:`~snapaudit.errors.FailFastError` quoting that error, instead of spending
``max_attempts`` on every cell. A service whose first attempts fail but whose retries
answer is therefore never stopped. A provider batch (:mod:`snapaudit.run.execution.batch`, whose
every round takes hours) stops after a first round failing that way, retries or not.
Until the stage's first success, a cell backing off keeps its concurrency slot
(:mod:`snapaudit.run.execution.runner`), so the retries come before more cells are sent. Transient
reasons (:data:`snapaudit.systems.failure.TRANSIENT`: timeouts, dropped connections,
408/425/429, 502/503/504/529, a Retry-After over the cap, an expired or cancelled batch
request) never trigger it: a service that is briefly down is retried (and its endpoint's
circuit breaker opens, :mod:`snapaudit.run.execution.breaker`). Failures no retry can mend (HTTP
401, 403, 404 and every other fatal 4xx) are never retried: the one HTTP client raises
them at once (:mod:`snapaudit.systems.transport`). The reasons are the
:class:`~snapaudit.systems.failure.FailureReason` values.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from snapaudit.systems.failure import is_transient

FAIL_FAST_FAILURES = 8
FAIL_FAST_CELLS = 3
ERROR_CHARS = 300


def describe(reason: str, detail: str | None) -> str:
    """One failure as shown to a user: ``reason: detail``, truncated."""
    text = f"{reason}: {detail}" if detail else reason
    return text if len(text) <= ERROR_CHARS else text[:ERROR_CHARS] + "..."


@dataclass
class FailureLog:
    """The failures of one stage invocation (see the module docstring)."""

    stage: str
    reasons: Counter[str] = field(default_factory=Counter)
    last_error: dict[str, str] = field(default_factory=dict)
    accepted: int = 0
    # True (the runner): stop only once retries failed too; False (a provider batch, whose
    # every round takes hours): the identical failures of the first round suffice
    after_retries: bool = False
    _same: tuple[str, str] | None = None
    _run: int = 0
    _cells: set[str] = field(default_factory=set)
    _retried: set[str] = field(default_factory=set)  # cells whose retry failed identically
    _first: dict[str, tuple[str, str]] = field(default_factory=dict)  # before any success

    def record(self, cell_key: str, reason: str, detail: str | None,
               endpoint: str | None = None) -> str | None:
        """Count one failure of a cell sent to ``endpoint`` (None: the stage's one
        endpoint); returns the error to fail fast with, or None to go on."""
        self.reasons[reason] += 1
        self.last_error[endpoint or self.stage] = describe(reason, detail)
        if self.accepted or is_transient(reason):
            self._same, self._run, self._cells, self._retried = None, 0, set(), set()
            if self.accepted:
                self._first.clear()
            return None
        signature = (reason, detail or "")
        if signature != self._same:
            self._same, self._run, self._cells, self._retried = signature, 0, set(), set()
        self._run += 1
        self._cells.add(cell_key)
        first = self._first.get(cell_key)
        if first is None:
            self._first[cell_key] = signature
        elif first == signature:
            self._retried.add(cell_key)
        cells = self._retried if self.after_retries else self._cells
        if self._run >= FAIL_FAST_FAILURES and len(cells) >= FAIL_FAST_CELLS:
            return describe(reason, detail)
        return None

    @property
    def identical(self) -> int:
        """Failures in the current run of one identical error."""
        return self._run

    @property
    def cells(self) -> int:
        return len(self._cells)
