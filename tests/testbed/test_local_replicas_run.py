"""A testbed audit on the embedded model: two replicas with whole-prompt state reuse, killed
mid-stage and resumed, lock the answers of one replica without reuse (temperature 1.0)."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path

import pytest

from snapaudit.progress import SilentProgress
from snapaudit.run.engine import run_protocol_file
from tests.helpers.cli import run_cli
from tests.helpers.ledger_view import query
from tests.helpers.protocol import write_testbed_protocol, write_testbed_world

pytestmark = [pytest.mark.local_llm, pytest.mark.slow]


def answers(run_dir: Path) -> list[dict[str, object]]:
    lines = (run_dir / "tables" / "answers.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line) for line in lines]


def answer_cells(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        return int(query(db, "SELECT COUNT(*) FROM cells WHERE stage='answer'")[0][0])
    except Exception:  # the schema is being created
        return 0


def test_two_replicas_killed_and_resumed_answer_as_one_replica_without_reuse(
        tmp_path: Path, smollm2_path: Path) -> None:
    corpus = write_testbed_world(tmp_path)
    generator = (f'backend = "local"\nmodel_path = "{smollm2_path}"\nmax_tokens = 48\n'
                 "temperature = 1.0")
    proto = write_testbed_protocol(tmp_path, corpus, generator, top_k=2, size=3,
                                   run_timeout_s=600.0)
    one = tmp_path / "one"
    run_protocol_file(proto, one, ["generator.replicas=1", "generator.prompt_cache_mb=0"],
                      SilentProgress())

    two = tmp_path / "two"
    db = two / "ledger.sqlite"
    proc = run_cli(proto, two, "--set", "generator.replicas=2")
    deadline = time.monotonic() + 600
    while proc.poll() is None and answer_cells(db) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before the kill"
    proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    killed_at = answer_cells(db)
    assert 4 <= killed_at < 18
    run_protocol_file(proto, two, ["generator.replicas=2"], SilentProgress())

    assert len(answers(one)) == 3 * 3 * 2
    assert answers(two) == answers(one)
    assert len({a["answer"] for a in answers(one)}) > 3  # temperature 1.0: answers vary
    metas = [json.loads(m) for (m,) in query(
        db, "SELECT meta FROM attempts WHERE stage='answer' AND outcome='accepted'")]
    assert {m["replica"] for m in metas} == {0, 1}
    assert {"saved", "loaded"} <= {m["kv_prompt_state"] for m in metas}
    one_metas = [json.loads(m) for (m,) in query(
        one / "ledger.sqlite", "SELECT meta FROM attempts WHERE stage='answer'")]
    assert {(m["replica"], m["kv_prompt_state"]) for m in one_metas} == {(0, "none")}
