"""A run against a service that injects every kind of fault."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from snapaudit.errors import RetriesExhaustedError
from snapaudit.progress import SilentProgress
from snapaudit.run.engine import run_protocol_file
from tests.fakes.rag_service import FAULTS, FakeRagService
from tests.helpers.ledger_view import accepted, d_from_ledger, query
from tests.helpers.protocol import write_protocol, write_world


def test_fault_injected_run_accepts_each_cell_once_and_records_every_attempt(
    tmp_path: Path,
) -> None:
    write_world(tmp_path, n=20)
    svc = FakeRagService(fault_share=0.6, faults_per_key=2, hang_s=0.6)
    with svc:
        proto = write_protocol(tmp_path, svc, size=20, run={"timeout_s": 0.3})
        out = run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
    db = tmp_path / "run" / "ledger.sqlite"
    cells = accepted(db)
    assert len(cells) == 20 * 2 * 2
    keys = query(db, "SELECT cell_key FROM cells WHERE stage='answer'")
    assert len(keys) == len({k for (k,) in keys})
    # every request the service saw is one attempt row, and every fault an invalid attempt
    attempts = query(db, "SELECT cell_key, outcome, reason FROM attempts WHERE stage='answer'")
    assert len(attempts) == sum(svc.hits.values())
    by_outcome = Counter(o for _, o, _ in attempts)
    assert by_outcome == {"accepted": 80, "transport_invalid": sum(svc.faults_served.values())}
    assert set(svc.faults_served) == set(FAULTS)
    reasons = Counter(r for _, o, r in attempts if o == "transport_invalid")
    for reason in ("http_500", "http_429", "timeout", "connection", "malformed_json",
                   "empty_answer", "oversized_answer"):
        assert reasons[reason] > 0, reason
    per_key = Counter(k for k, _, _ in attempts)
    assert per_key == Counter({k: svc.hits[k] for k in svc.hits})
    # the accepted attempt of each cell is its last one
    for key, (attempt_id, _) in cells.items():
        last = query(db, "SELECT MAX(id) FROM attempts WHERE stage='answer' AND cell_key=?",
                     (key,))[0][0]
        assert attempt_id == last
    assert out.results["kernels"]["exact"]["d_hat"] == pytest.approx(
        d_from_ledger(db, "old", "new"), abs=1e-9)


def test_exhausted_cells_are_reported_then_resumed(tmp_path: Path) -> None:
    write_world(tmp_path, n=10)
    svc = FakeRagService(fault_share=0.5, faults_per_key=2, fault_kinds=("500",))
    with svc:
        proto = write_protocol(tmp_path, svc, size=10, run={"max_attempts": 1})
        with pytest.raises(RetriesExhaustedError) as info:
            run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
        failed = set(info.value.cell_keys)
        assert failed and all(svc.faults_served for _ in failed)
        db = tmp_path / "run" / "ledger.sqlite"
        assert not failed & set(accepted(db))
        assert len(accepted(db)) + len(failed) == 40
        # a changed [run] knob is fine on resume; only missing cells are asked again
        before = sum(svc.hits.values())
        run_protocol_file(proto, tmp_path / "run", ["run.max_attempts=5"], SilentProgress())
        assert len(accepted(db)) == 40
        asked = sum(svc.hits.values()) - before
        assert asked == sum(svc.hits[k] - 1 for k in failed)
