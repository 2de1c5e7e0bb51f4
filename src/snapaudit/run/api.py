"""``snapaudit.audit()`` and ``await snapaudit.aaudit()``: run (or resume) a protocol from
Python and get the typed results.

``audit()`` blocks; called where an event loop is already running in this thread (a Jupyter
cell, an async web handler), it runs the audit on a loop of its own in a worker thread and
waits for it. ``aaudit()`` runs it on the caller's loop (an async Python system can then use
clients bound to that loop); cancelling the awaiting task stops the run as Ctrl-C does
(attempts in flight are marked ``interrupted``; a later call resumes).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING

from snapaudit.progress import Progress, SilentProgress
from snapaudit.run.engine import RunOutcome, arun_audit, run_audit
from snapaudit.run.execution.gcpacing import gc_pacing
from snapaudit.run.record.protocol import Protocol, load_protocol

if TYPE_CHECKING:
    from snapaudit.stats.analysis import AnalysisResult
    from snapaudit.systems.base import System
    from snapaudit.systems.resources import RunResources


def audit(protocol: Protocol | str | Path, run_dir: str | Path, *,
          overrides: Sequence[str] = (), base_dir: str | Path | None = None,
          progress: Progress | None = None,
          systems: Mapping[str, System] | None = None,
          pace_gc: bool = False, resources: RunResources | None = None) -> AnalysisResult:
    """Run every stage of ``protocol`` not yet locked in ``run_dir``, then the analysis.

    ``protocol`` is a protocol file (relative paths resolve against its folder) or a
    :class:`Protocol` (relative paths resolve against ``base_dir``, default the current
    folder). Returns the typed :class:`~snapaudit.stats.analysis.AnalysisResult`; the run
    directory holds the same as ``results.json``. Errors are :class:`snapaudit.SnapauditError`.

    ``pace_gc``: pace the garbage collector while cells run (as the CLI does; faster at high
    concurrency). Off by default: the collector is the caller's process's, and is left alone.
    ``resources``: replica pools and shared generators to reuse across runs (the caller closes
    them); by default each run has its own, closed when it returns. Inside a running event
    loop the audit runs in a worker thread (see the module doc).
    """
    if _loop_running():
        with ThreadPoolExecutor(max_workers=1, thread_name_prefix="snapaudit-audit") as pool:
            return pool.submit(audit, protocol, run_dir, overrides=overrides,
                               base_dir=base_dir, progress=progress, systems=systems,
                               pace_gc=pace_gc, resources=resources).result()
    proto, base = _resolve(protocol, overrides, base_dir)
    with gc_pacing(pace_gc):
        outcome = run_audit(proto, Path(run_dir), base_dir=base,
                            progress=progress or SilentProgress(), systems=systems,
                            resources=resources)
    return _analysis(outcome)


async def aaudit(protocol: Protocol | str | Path, run_dir: str | Path, *,
                 overrides: Sequence[str] = (), base_dir: str | Path | None = None,
                 progress: Progress | None = None,
                 systems: Mapping[str, System] | None = None,
                 pace_gc: bool = False,
                 resources: RunResources | None = None) -> AnalysisResult:
    """:func:`audit` awaited on the caller's running event loop (same arguments, same
    result)."""
    proto, base = _resolve(protocol, overrides, base_dir)
    with gc_pacing(pace_gc):
        outcome = await arun_audit(proto, Path(run_dir), base_dir=base,
                                   progress=progress or SilentProgress(), systems=systems,
                                   resources=resources)
    return _analysis(outcome)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _resolve(protocol: Protocol | str | Path, overrides: Sequence[str],
             base_dir: str | Path | None) -> tuple[Protocol, Path]:
    if isinstance(protocol, Protocol):
        proto = protocol if not overrides else _override(protocol, overrides)
        return proto, Path(base_dir) if base_dir is not None else Path.cwd()
    proto = load_protocol(protocol, overrides)
    return proto, Path(base_dir) if base_dir is not None else Path(protocol).resolve().parent


def _analysis(outcome: RunOutcome) -> AnalysisResult:
    assert outcome.analysis is not None
    return outcome.analysis


def _override(protocol: Protocol, overrides: Sequence[str]) -> Protocol:
    from snapaudit.run.record.protocol import apply_overrides, parse_protocol

    data = protocol.model_dump(mode="json", exclude_none=True)
    return parse_protocol(apply_overrides(data, overrides))
