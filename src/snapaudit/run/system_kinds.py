"""One builder per ``system.kind``, ``(protocol, state, run_dir, base_dir, resources) ->
System``; each imports its system only when called (the kinds are registered in
:mod:`snapaudit.run.systems`).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from snapaudit.errors import ConfigError
from snapaudit.run.record.protocol import Protocol

if TYPE_CHECKING:
    from snapaudit.systems.base import System
    from snapaudit.systems.resources import RunResources


def http(protocol: Protocol, state: str, run_dir: Path, base_dir: Path | None,
         resources: RunResources | None) -> System:
    from snapaudit.run.systems import run_resources
    from snapaudit.systems.config import HttpSystemConfig
    from snapaudit.systems.http import HttpSystem

    cfg = protocol.systems[state]
    assert isinstance(cfg, HttpSystemConfig)
    # without the run's resources an HTTP system has a pool of its own ([run] replicas)
    pools = resources if resources is not None else run_resources(protocol)
    return HttpSystem(state, cfg, protocol.run, pools.pool_for(cfg.url), pools.secrets)


def python(protocol: Protocol, state: str, run_dir: Path, base_dir: Path | None,
           resources: RunResources | None) -> System:
    """The run's states share one :class:`~snapaudit.systems.python_slots.SlotGroups`: a
    sync target two states share is never entered twice at once."""
    from snapaudit.systems.config import PythonSystemConfig
    from snapaudit.systems.python import PythonSystem
    from snapaudit.systems.python_slots import SlotGroups

    cfg = protocol.systems[state]
    assert isinstance(cfg, PythonSystemConfig)
    groups = resources.shared("python-slots", SlotGroups) if resources is not None else None
    return PythonSystem(state, cfg, protocol.run, base_dir, groups)


def testbed(protocol: Protocol, state: str, run_dir: Path, base_dir: Path | None,
            resources: RunResources | None) -> System:
    """A relative ``testbed.corpus`` resolves against ``base_dir`` (the protocol file's
    folder), like every other path in a protocol."""
    from snapaudit.testbed.generate.config import LocalGeneratorConfig
    from snapaudit.testbed.system import TestbedSystem

    tb = protocol.testbed
    if tb is None:
        raise ConfigError("system.kind = 'testbed' needs a [testbed] section")
    if tb.corpus and base_dir is not None and not Path(tb.corpus).is_absolute():
        tb = tb.model_copy(update={"corpus": str(base_dir / tb.corpus)})
    return TestbedSystem.from_config(tb, protocol.generator or LocalGeneratorConfig(), state,
                                     run_dir, resources)
