"""The system of each state, built from the protocol: an HTTP endpoint, a Python callable or
the testbed."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from snapaudit.errors import ConfigError
from snapaudit.registry import Registry
from snapaudit.run.record.protocol import Protocol
from snapaudit.systems.resources import RunResources

if TYPE_CHECKING:
    from snapaudit.systems.base import System

SYSTEMS: Registry[System] = Registry("system kind", {
    "http": "snapaudit.run.system_kinds:http",
    "python": "snapaudit.run.system_kinds:python",
    "testbed": "snapaudit.run.system_kinds:testbed",
})


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
        from snapaudit.run.after.replay import ReplaySystem

        return ReplaySystem(state, protocol.lineage)
    return SYSTEMS.build(protocol.system.kind, protocol, state, run_dir, base_dir, resources)
