"""``snapaudit.audit()``: run (or resume) a protocol from Python and get the typed results."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from snapaudit.progress import Progress, SilentProgress
from snapaudit.run.engine import run_audit
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
    them); by default each run has its own, closed when it returns.
    """
    if isinstance(protocol, Protocol):
        proto = protocol if not overrides else _override(protocol, overrides)
        base = Path(base_dir) if base_dir is not None else Path.cwd()
    else:
        proto = load_protocol(protocol, overrides)
        base = Path(base_dir) if base_dir is not None else Path(protocol).resolve().parent
    with gc_pacing(pace_gc):
        outcome = run_audit(proto, Path(run_dir), base_dir=base,
                            progress=progress or SilentProgress(), systems=systems,
                            resources=resources)
    assert outcome.analysis is not None
    return outcome.analysis


def _override(protocol: Protocol, overrides: Sequence[str]) -> Protocol:
    from snapaudit.run.record.protocol import apply_overrides, parse_protocol

    data = protocol.model_dump(mode="json", exclude_none=True)
    return parse_protocol(apply_overrides(data, overrides))
