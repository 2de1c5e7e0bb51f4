"""Library code changes nothing process-wide (issue 41, item 5): a run's secrets are its own
(registered in its ``RunResources``, masked by its clients and in its ledger), and neither
the environment nor any module-level container of snapaudit keeps anything of a run."""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import pytest

from snapaudit.progress import SilentProgress
from snapaudit.run.engine import run_protocol_file
from snapaudit.systems.redact import Secrets, redact
from tests.fakes.hostile_service import SECRET_ENV, HostileService
from tests.helpers.protocol import write_protocol, write_world

# shaped like no credential: only a registered secret's mask can catch them
KEYS = ["walrus-tundra-FIRST-RUN-KEY-7", "otter-basalt-SECOND-RUN-KEY-9"]


def _module_state() -> dict[str, int]:
    """The size of every module-level set, dict and list of the loaded snapaudit modules."""
    return {f"{name}.{attr}": len(value)
            for name, module in list(sys.modules.items()) if name.startswith("snapaudit")
            for attr, value in list(vars(module).items())
            if isinstance(value, set | dict | list) and not attr.startswith("__")}


def _errors(run: Path) -> list[str]:
    db = sqlite3.connect(run / "ledger.sqlite")
    try:
        return [str(r[0]) for r in db.execute("SELECT error FROM attempts WHERE error IS NOT "
                                              "NULL")]
    finally:
        db.close()


def test_two_runs_in_one_process_share_nothing(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    after: list[dict[str, int]] = []
    for i, key in enumerate(KEYS):
        root = tmp_path / f"r{i}"
        root.mkdir()
        write_world(root)
        monkeypatch.setenv(SECRET_ENV, key)
        environ = dict(os.environ)
        with HostileService(fault_share=1.0, faults_per_key=1,
                            fault_kinds=("echo_text",)) as svc:
            auth = "".join(f'[systems.{s}.auth]\nenv = "{SECRET_ENV}"\n' for s in svc.states)
            proto = write_protocol(root, svc, extra=auth)
            run_protocol_file(proto, root / "run", [], SilentProgress())
        assert dict(os.environ) == environ  # the run set no variable
        errors = _errors(root / "run")
        assert errors and all("[REDACTED]" in e and key not in e for e in errors)
        after.append(_module_state())
    # the second run left no more behind than the first (before: the module-global secret
    # registry kept every run's keys for the life of the process)
    grown = {k: (after[0].get(k), n) for k, n in after[1].items() if after[0].get(k) != n}
    assert not grown


def test_secrets_are_masked_where_they_are_given() -> None:
    secrets = Secrets("short", KEYS[0])  # under 6 characters: too common to mask
    secrets.add(KEYS[1])
    assert sorted(secrets) == sorted(KEYS)
    text = f"echo {KEYS[0]} and {KEYS[1]} and short"
    assert redact(text, secrets) == "echo [REDACTED] and [REDACTED] and short"
    assert redact(text) == text  # nothing is registered behind the caller's back
