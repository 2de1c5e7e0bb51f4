"""The system of each state, built from the protocol: an HTTP endpoint, a Python callable or
the testbed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from snapaudit.errors import ConfigError
from snapaudit.registry import Registry
from snapaudit.run.protocol import Protocol

if TYPE_CHECKING:
    from snapaudit.systems.base import System

SYSTEMS: Registry[System] = Registry("system kind", {
    "http": "snapaudit.run.system_kinds:http",
    "python": "snapaudit.run.system_kinds:python",
    "testbed": "snapaudit.run.system_kinds:testbed",
})


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
    return SYSTEMS.build(protocol.system.kind, protocol, state, run_dir, base_dir)
