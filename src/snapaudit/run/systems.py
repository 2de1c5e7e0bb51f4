"""The system of each state, built from the protocol: an HTTP endpoint, a Python callable or
the testbed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from snapaudit.errors import ConfigError
from snapaudit.run.protocol import Protocol

if TYPE_CHECKING:
    from snapaudit.systems.base import System


def build_system(protocol: Protocol, state: str, run_dir: Path,
                 base_dir: Path | None = None) -> System:
    """The system answering in ``state``: an HTTP endpoint or the built-in testbed.

    A relative ``testbed.corpus`` resolves against ``base_dir`` (the protocol file's
    folder), like every other path in a protocol.
    """
    if state not in protocol.states.order:
        raise ConfigError(f"unknown state {state!r}")
    if protocol.lineage is not None:  # a re-judged run: the parent's locked answers
        from snapaudit.run.replay import ReplaySystem

        return ReplaySystem(state, protocol.lineage)
    from snapaudit.systems.replicas import register_fleets

    register_fleets({fleet[0]: fleet[1:] for fleet in protocol.run.replicas if fleet},
                    fail_threshold=protocol.run.replica_failures,
                    rest_s=protocol.run.replica_rest_s)
    if protocol.system.kind == "http":
        from snapaudit.systems.config import HttpSystemConfig
        from snapaudit.systems.http import HttpSystem

        cfg = protocol.systems[state]
        assert isinstance(cfg, HttpSystemConfig)
        return HttpSystem(state, cfg, protocol.run)
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
                                     run_dir)
