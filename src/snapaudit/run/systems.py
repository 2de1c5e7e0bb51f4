"""The system of each state, built from the protocol: an HTTP endpoint, a Python callable or
the testbed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from snapaudit.errors import ConfigError
from snapaudit.run.protocol import Protocol
from snapaudit.systems.resources import RunResources

if TYPE_CHECKING:
    from snapaudit.systems.base import System


def run_resources(protocol: Protocol) -> RunResources:
    """New resources for one run of ``protocol``: its ``[run] replicas`` fleets (the caller
    closes them when the run ends)."""
    r = protocol.run
    return RunResources({fleet[0]: fleet[1:] for fleet in r.replicas if fleet},
                        fail_threshold=r.replica_failures, rest_s=r.replica_rest_s)


def build_system(protocol: Protocol, state: str, run_dir: Path,
                 base_dir: Path | None = None, resources: RunResources | None = None
                 ) -> System:
    """The system answering in ``state``: an HTTP endpoint or the built-in testbed.

    A relative ``testbed.corpus`` resolves against ``base_dir`` (the protocol file's
    folder), like every other path in a protocol. ``resources``: the run's replica pools and
    shared generator (:func:`run_resources`); without them an HTTP system has a pool of its
    own (still with its ``[run] replicas``) and a testbed state a generator of its own.
    """
    if state not in protocol.states.order:
        raise ConfigError(f"unknown state {state!r}")
    if protocol.lineage is not None:  # a re-judged run: the parent's locked answers
        from snapaudit.run.replay import ReplaySystem

        return ReplaySystem(state, protocol.lineage)
    if protocol.system.kind == "http":
        from snapaudit.systems.config import HttpSystemConfig
        from snapaudit.systems.http import HttpSystem

        cfg = protocol.systems[state]
        assert isinstance(cfg, HttpSystemConfig)
        pools = resources if resources is not None else run_resources(protocol)
        return HttpSystem(state, cfg, protocol.run, pools.pool_for(cfg.url))
    if protocol.system.kind == "python":
        from snapaudit.systems.config import PythonSystemConfig
        from snapaudit.systems.python import PythonSystem

        pcfg = protocol.systems[state]
        assert isinstance(pcfg, PythonSystemConfig)
        return PythonSystem(state, pcfg, protocol.run, base_dir)
    from snapaudit.testbed.generate.config import GeneratorConfig
    from snapaudit.testbed.system import TestbedSystem

    tb = protocol.testbed
    if tb is None:
        raise ConfigError("system.kind = 'testbed' needs a [testbed] section")
    if tb.corpus and base_dir is not None and not Path(tb.corpus).is_absolute():
        tb = tb.model_copy(update={"corpus": str(base_dir / tb.corpus)})
    return TestbedSystem.from_config(tb, protocol.generator or GeneratorConfig(), state,
                                     run_dir, resources)
