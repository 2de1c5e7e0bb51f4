"""The review's results, kept current: a lock or a decision re-analyses the run.

Locked human labels (``judges.human``) and the change review (``review``) are sections of
``results.json`` and of the report. :func:`update_results` recomputes both the one way a run's
results are computed, the engine's re-analysis (:func:`snapaudit.run.engine.reanalyze`: every
locked stage kept, tables and ``results.json`` rewritten), then writes the report again.

:class:`ResultsUpdater` runs it on a thread of its own, so a save never waits for an
analysis: requests made while one runs are served by one more run after it (the last state
of the ledger is always analysed). It takes the run directory's lock for each run; while
another command holds it (a ``snapaudit run``, another annotator's update), it waits and
tries again. What it last did is :meth:`ResultsUpdater.state`, which the page shows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from snapaudit.errors import BusyError, ConfigError, SnapauditError

BUSY_WAIT_S = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0)  # waits while the folder is busy


def update_results(run_dir: Path) -> None:
    """Re-analyse a finished run (``results.json`` with ``judges.human`` and ``review`` as the
    ledger holds them now) and write its report again."""
    from snapaudit.progress import SilentProgress
    from snapaudit.report.build import write_report
    from snapaudit.run.engine import reanalyze
    from snapaudit.run.record.rundir import RunDir

    if not RunDir(run_dir, read_only=True).results_path.exists():
        raise ConfigError("the run has no results.json yet: `snapaudit run` writes it, with "
                          "the review")
    reanalyze(run_dir, SilentProgress())
    write_report(run_dir)


class ResultsUpdater:
    """``update(run_dir)`` on a worker thread, on request, coalesced; see the module."""

    def __init__(self, run_dir: Path,
                 update: Callable[[Path], object] = update_results) -> None:
        self._run_dir, self._update = run_dir, update
        self._cond = threading.Condition()
        self._wanted = self._done = 0  # requests made; requests the last finished run covers
        self._running = False
        self._error: str | None = None
        self._at: str | None = None
        self._closing = False
        self._thread = threading.Thread(target=self._loop, name="snapaudit-results",
                                        daemon=True)
        self._thread.start()

    def request(self) -> None:
        """Bring the results up to what the ledger holds now (soon, on the worker)."""
        with self._cond:
            self._wanted += 1
            self._cond.notify_all()

    def state(self) -> dict[str, Any]:
        """``{state: current|updating|failed, error, updated_at}`` (UTC)."""
        with self._cond:
            if self._running or self._done < self._wanted:
                state = "updating"
            else:
                state = "failed" if self._error else "current"
            return {"state": state, "error": self._error, "updated_at": self._at}

    def wait(self, timeout: float | None = None) -> bool:
        """Until every request so far is served (True) or ``timeout`` passes (False)."""
        with self._cond:
            target = self._wanted
            return self._cond.wait_for(lambda: self._done >= target and not self._running,
                                       timeout)

    def close(self) -> None:
        """Serve the requests made so far (no more waiting on a busy folder), then stop."""
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join()

    def _loop(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._wanted > self._done or self._closing)
                if self._wanted == self._done:
                    return  # closing, nothing left
                target, self._running = self._wanted, True
            error = self._run_once()
            with self._cond:
                self._running = False
                self._done, self._error = target, error
                if error is None:
                    self._at = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                self._cond.notify_all()

    def _run_once(self) -> str | None:
        """One update; the waits of :data:`BUSY_WAIT_S` while the folder is busy."""
        for wait in (*BUSY_WAIT_S, None):
            try:
                self._update(self._run_dir)
                return None
            except BusyError as exc:
                if wait is None or self._sleep(wait):
                    return str(exc)
            except SnapauditError as exc:
                return str(exc)
            except Exception as exc:  # a bug: one line for the page, the server lives on
                return f"internal error: {type(exc).__name__}: {exc}"
        return None  # not reached

    def _sleep(self, seconds: float) -> bool:
        """Wait ``seconds`` unless closing; True when closing."""
        with self._cond:
            return self._cond.wait_for(lambda: self._closing, seconds)
