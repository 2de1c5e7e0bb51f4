"""A Python system's code, as it was when the run first built it, checked on every ``run``.

The first ``run`` that builds the systems of a ``system.kind = "python"`` protocol records
their specs (:func:`snapaudit.systems.python.python_spec`: the target, its kwargs, its
module's hash, the local modules it imports, the distributions they use, the
``bind_files``) in the ledger's meta (``systems_spec``). Every later ``run`` of that folder
compares the live specs with them, a finished run included (its systems are not built: their
specs are computed, which imports the targets and hashes the files, and calls nothing), and
refuses (:class:`~snapaudit.errors.IntegrityError`, exit 2) naming each module, distribution
or file that changed: resuming would put answers of two code versions under one lock. A run
begun before specs were recorded gets them on its next ``run`` unless its answers are
already locked (then there is nothing to compare with).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from snapaudit.errors import IntegrityError
from snapaudit.hashing import canonical_json
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.protocol import Protocol, changed_fields

if TYPE_CHECKING:
    from snapaudit.systems.base import System

SPEC_KEY = "systems_spec"


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


def check_systems(ledger: Ledger, live: Mapping[str, Any] | None, *,
                  record: bool = True) -> None:
    """Refuse when ``live`` differs from the recorded specs; record them when none are."""
    if live is None:
        return
    stored = ledger.get_meta(SPEC_KEY)
    if stored is None:
        answers_locked = any(rec.get("stage") == "answer" for rec, _ in ledger.locks())
        if record and not answers_locked:
            ledger.set_meta(SPEC_KEY, canonical_json(dict(live)))
        return
    changed = changed_fields(json.loads(stored), json.loads(canonical_json(dict(live))))
    if changed:
        raise IntegrityError(
            "the Python system's code changed since this run recorded it: "
            + "; ".join(list(dict.fromkeys(describe(c) for c in changed))[:12])
            + ". Resuming would put answers of two code versions under one lock: start a "
            "new run directory (--run-dir) for the changed system, or restore the code.")


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
