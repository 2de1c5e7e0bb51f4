"""Systems under audit: what answers a question in one state."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import TYPE_CHECKING

from snapaudit.errors import ConfigError

if TYPE_CHECKING:
    from snapaudit.protocol import Protocol
    from snapaudit.systems.base import System


def build_system(protocol: Protocol, state: str, run_dir: Path,
                 base_dir: Path | None = None) -> System:
    """The system answering in ``state``: an HTTP endpoint or the built-in testbed.

    A relative ``testbed.corpus`` resolves against ``base_dir`` (the protocol file's
    folder), like every other path in a protocol.
    """
    if state not in protocol.states.order:
        raise ConfigError(f"unknown state {state!r}")
    if protocol.system.kind == "http":
        from snapaudit.systems.http import HttpSystem

        return HttpSystem(state, protocol.systems[state], protocol.run)
    tb = protocol.testbed
    if tb is not None and tb.corpus and base_dir is not None and not Path(tb.corpus).is_absolute():
        testbed = tb.model_copy(update={"corpus": str(base_dir / tb.corpus)})
        protocol = protocol.model_copy(update={"testbed": testbed})
    module = importlib.import_module("snapaudit.systems.testbed")
    system: System = module.TestbedSystem.from_protocol(protocol, state, run_dir)
    return system
