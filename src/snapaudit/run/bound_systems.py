"""A Python system's code, as it was when the run first built it, checked on every ``run``.

The first ``run`` that builds the systems of a ``system.kind = "python"`` protocol records
their specs (:func:`snapaudit.systems.python.python_spec`: the target, its kwargs, its
module's hash, the local modules it imports, the distributions they use, the
``bind_files``) in the ledger's meta (``systems_spec``). What the calls import later (a helper
imported inside a function, a framework loaded lazily) is recorded in the meta
(``systems_call_imports``: each local module's path and SHA-256, each distribution's version)
by :class:`CallImportsRecord` after the call that imported it and before its answer is
accepted. Every later ``run`` of that folder compares both with the code now, a finished run
included (its systems are not built: their specs are computed, which imports the targets and
hashes the files, and calls nothing), and refuses (:class:`~snapaudit.errors.IntegrityError`,
exit 2) naming each module, distribution or file that changed: resuming would put answers of
two code versions under one lock. A run with no accepted cell yet has nothing to protect: it
starts again with the new code (its seeds as a fresh run's; the earlier attempts stay in the
ledger). A run begun before specs were recorded gets them on its next ``run`` unless its
answers are already locked (then there is nothing to compare with).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snapaudit.errors import IntegrityError
from snapaudit.hashing import canonical_json, sha256_file
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.ledger.attempts import RESTART_KEY
from snapaudit.run.record.protocol import Protocol, changed_fields

if TYPE_CHECKING:
    from snapaudit.systems.base import System

SPEC_KEY = "systems_spec"
CALLS_KEY = "systems_call_imports"


def live_specs(protocol: Protocol, base_dir: Path | None,
               systems: Mapping[str, System]) -> dict[str, Any] | None:
    """The specs of the run's Python systems now (None for any other kind of run)."""
    if protocol.system.kind != "python" or protocol.lineage is not None:
        return None
    if systems:
        return {s: systems[s].spec() for s in sorted(systems)}
    from snapaudit.systems.config import PythonSystemConfig
    from snapaudit.systems.python import python_spec

    out: dict[str, Any] = {}
    for state in sorted(protocol.states.order):
        cfg = protocol.systems[state]
        assert isinstance(cfg, PythonSystemConfig)
        out[state] = python_spec(cfg, base_dir)
    return out


def check_systems(ledger: Ledger, live: Mapping[str, Any] | None, *, record: bool = True,
                  base_dir: Path | None = None) -> str | None:
    """Refuse when ``live`` or the code the calls imported differs from what was recorded;
    record the specs when none are. A run with no accepted cell starts again instead: the
    note saying so is returned (None otherwise)."""
    if live is None:
        return None
    stored = ledger.get_meta(SPEC_KEY)
    if stored is None:
        answers_locked = any(rec.get("stage") == "answer" for rec, _ in ledger.locks())
        if record and not answers_locked:
            ledger.set_meta(SPEC_KEY, canonical_json(dict(live)))
        return None
    changed = [describe(c) for c in
               changed_fields(json.loads(stored), json.loads(canonical_json(dict(live))))]
    changed += call_changes(json.loads(ledger.get_meta(CALLS_KEY) or "{}"), base_dir)
    if not changed:
        return None
    shown = "; ".join(list(dict.fromkeys(changed))[:12])
    if record and not ledger.stages() and not ledger.locks():
        start_again(ledger, live)
        return (f"the Python system's code changed ({shown}) before any answer was accepted: "
                "the run starts again with the code as it is now (the earlier attempts stay "
                "in the ledger)")
    raise IntegrityError(
        f"the Python system's code changed since this run recorded it: {shown}. Resuming "
        "would put answers of two code versions under one lock: start a new run directory "
        "(--run-dir) for the changed system, or restore the code.")


def start_again(ledger: Ledger, live: Mapping[str, Any]) -> None:
    """Bind the code as it is now; seeds count from here (the mark first: a kill between
    these writes starts again again)."""
    last = max((a.id for a in ledger.attempts()), default=0)
    ledger.set_meta(RESTART_KEY, str(last))
    ledger.set_meta(CALLS_KEY, "{}")
    ledger.set_meta(SPEC_KEY, canonical_json(dict(live)))


def call_changes(recorded: Mapping[str, Any], base_dir: Path | None) -> list[str]:
    """What the calls imported (``systems_call_imports``) that is no longer as recorded."""
    from importlib.metadata import PackageNotFoundError, version

    out: list[str] = []
    for state, parts in sorted(recorded.items()):
        for name, entry in sorted(parts.get("modules", {}).items()):
            path = Path(entry["path"])
            if not path.is_absolute() and base_dir is not None:
                path = base_dir / path
            if not path.is_file():
                out.append(f"state {state}: local module {name} (imported during a call) is "
                           "gone")
            elif sha256_file(path) != entry["sha256"]:
                out.append(f"state {state}: local module {name} (imported during a call)")
        for dist, was in sorted(parts.get("distributions", {}).items()):
            try:
                now = version(dist)
            except PackageNotFoundError:
                now = "not installed"
            if now != was:
                out.append(f"state {state}: installed distribution {dist} {was} -> {now} "
                           "(imported during a call)")
    return out


class CallImportsRecord:
    """Records in the ledger's meta what the Python systems' calls imported beyond their
    specs, when they report it (``PythonSystem.on_imports``): before the call's answer goes
    to the ledger, so no accepted answer depends on code the run did not bind."""

    def __init__(self, ledger: Ledger):
        self._ledger = ledger
        self._known: dict[str, dict[str, dict[str, Any]]] = json.loads(
            ledger.get_meta(CALLS_KEY) or "{}")

    def __call__(self, state: str, new: Mapping[str, Mapping[str, Any]]) -> None:
        mine = self._known.setdefault(state, {})
        for part, items in new.items():
            known = mine.setdefault(part, {})
            for name, value in items.items():
                if name in known and known[name] != value:
                    raise IntegrityError(f"state {state}: {name} changed during the run (it "
                                         "was imported again with other contents)")
                known[name] = value
        self._ledger.set_meta(CALLS_KEY, canonical_json(self._known))

    def watch(self, systems: Mapping[str, System]) -> None:
        """Be told what the calls of ``systems`` import (the Python ones)."""
        for system in systems.values():
            if hasattr(system, "on_imports"):
                system.on_imports = self


def describe(field: str) -> str:
    """One changed spec field in words: ``old.imports.modules.helper`` -> ``state old:
    local module helper``."""
    state, _, rest = field.partition(".")
    for prefix, what in (("imports.modules.", "local module"),
                         ("imports.distributions.", "installed distribution"),
                         ("files.", "bound file"), ("code.", "target module")):
        if rest.startswith(prefix):
            name = rest[len(prefix):]
            if what == "bound file":
                name = name.rsplit(".", 1)[0] if name.endswith((".sha256", ".bytes")) else name
            if what == "target module":
                return f"state {state}: the target's module ({name})"
            return f"state {state}: {what} {name}"
    return f"state {state}: {rest}"
