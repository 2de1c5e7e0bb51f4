"""Ctrl-C during a local-model call: exit 130, every attempt marked (issue #12.3).

The time to exit is measured in bench/bench_sigint_local.py, not asserted here."""

from __future__ import annotations

import signal
import sqlite3
import time
from pathlib import Path

import pytest

from tests.helpers.cli import run_cli
from tests.helpers.protocol import write_testbed_protocol, write_testbed_world

REPO = Path(__file__).resolve().parents[3]


@pytest.mark.slow
@pytest.mark.local_llm
def test_sigint_during_a_local_call_exits_130(tmp_path: Path, smollm2_path: Path) -> None:
    corpus = write_testbed_world(tmp_path)
    generator = (f'backend = "local"\nmodel_path = "{smollm2_path}"\nmax_tokens = 512\n'
                 "temperature = 0.8")
    proto = write_testbed_protocol(tmp_path, corpus, generator, top_k=1, size=6,
                                   run_timeout_s=600.0)
    db = tmp_path / "run" / "ledger.sqlite"
    proc = run_cli(proto, tmp_path / "run")
    deadline = time.monotonic() + 300
    # an answer attempt begun: a local-model call in flight (the first cells are retrieval's)
    while proc.poll() is None and answer_attempts(db) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.3)
    assert proc.poll() is None, "the run ended before the SIGINT"
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    con = sqlite3.connect(db)
    try:
        assert con.execute("SELECT COUNT(*) FROM attempts WHERE outcome IS NULL").fetchone() \
            == (0,)
        assert con.execute("SELECT COUNT(*) FROM attempts WHERE outcome='interrupted' AND "
                           "stage='answer'").fetchone()[0] >= 1
    finally:
        con.close()


def answer_attempts(db: Path) -> int:
    if not db.exists():  # connecting would create it
        return 0
    try:
        con = sqlite3.connect(db)
        try:
            return int(con.execute("SELECT COUNT(*) FROM attempts WHERE stage='answer'"
                                   ).fetchone()[0])
        finally:
            con.close()
    except sqlite3.Error:  # no ledger or schema yet
        return 0
