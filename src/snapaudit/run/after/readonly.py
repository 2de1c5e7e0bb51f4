"""A finished run in a folder that cannot be written (a read-only mount, an archive).

``snapaudit run`` on such a run verifies it without writing anything (the files, every
accepted cell, the lock chain and this protocol's hash) and returns its ``results.json``,
so that the command prints the summary instead of failing on its first write.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from snapaudit.errors import ProtocolMismatchError
from snapaudit.results import RunResults, read_results
from snapaudit.run.after.status import run_status
from snapaudit.run.record.protocol import Protocol, bound_fields, changed_fields, protocol_hash
from snapaudit.run.record.rundir import RunDir


def read_only_finished(run_dir: Path) -> bool:
    """A finished run (``results.json``) whose folder this process cannot write."""
    rd = RunDir(run_dir, read_only=True)
    return rd.results_path.exists() and rd.has_ledger() and not os.access(rd.path, os.W_OK)


def finished_results(protocol: Protocol, run_dir: Path) -> RunResults:
    """Verify the finished run read-only and return its results (IntegrityError or
    ProtocolMismatchError as ``run`` would raise them)."""
    run_status(run_dir)  # files, accepted cells, lock chain
    with RunDir(run_dir, read_only=True) as rd:
        ledger = rd.ledger()
        if protocol_hash(protocol) != ledger.get_meta("protocol_sha256"):
            stored = json.loads(ledger.get_meta("protocol_bound") or "{}")
            raise ProtocolMismatchError(changed_fields(stored, bound_fields(protocol)))
        return read_results(rd.results_path)
