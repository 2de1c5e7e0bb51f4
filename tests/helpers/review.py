"""A finished run for the review tests: the loopback RAG fake, a rule judge, gold unlocked.

Build one per test module with :func:`build_review_run` and give each test a copy
(:func:`copy_run`)."""

from __future__ import annotations

import shutil
from pathlib import Path

from snapaudit.progress import SilentProgress
from snapaudit.run.engine import run_protocol_file
from tests.fakes.rag_service import FakeRagService
from tests.helpers.protocol import write_protocol, write_world

RULE_JUDGE = 'kind = "rule"\nname = "rule"'


def build_review_run(root: Path, size: int = 8) -> Path:
    """A finished run with a rule judge in ``root/run`` (its world in ``root``): ``size``
    questions, states old and new, 2 repeats."""
    write_world(root)
    with FakeRagService() as svc:
        proto = write_protocol(root, svc, size=size, judge=RULE_JUDGE)
        run_protocol_file(proto, root / "run", [], SilentProgress())
    return root / "run"


def copy_run(run: Path, tmp: Path) -> Path:
    """A copy of ``run`` (the run folder only) as ``tmp/run``."""
    return Path(shutil.copytree(run, tmp / "run"))
