"""``snapaudit rejudge``: a new judge over a run's locked answers, with no system call."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from tests.helpers.cli import exit_code
from tests.helpers.ledger_view import query
from tests.helpers.protocol import write_protocol, write_world


def test_rejudge_makes_no_call_and_its_artifact_verifies(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.fakes.rag_service import FakeRagService

    write_world(tmp_path, n=12)
    (tmp_path / "judge.toml").write_text('[judge]\nkind = "rule"\nname = "rule"\n')
    parent, child = tmp_path / "parent", tmp_path / "child"
    with FakeRagService() as svc:
        proto = write_protocol(tmp_path, svc, size=12)
        assert exit_code(["run", str(proto), "--run-dir", str(parent), "--progress", "silent"]) == 0
        # from now on the service fails every request it gets
        svc.fault_share, svc.faults_per_key, svc.fault_kinds = 1.0, 10**6, ("500",)
        hits = sum(svc.hits.values())
        assert exit_code(["rejudge", str(parent), "--judge", str(tmp_path / "judge.toml"),
                      "--out", str(child), "--progress", "silent"]) == 0
        assert sum(svc.hits.values()) == hits  # zero system calls
    resolved = tomllib.loads((child / "protocol.resolved.toml").read_text())
    assert resolved["judge"]["kind"] == "rule"
    lock = query(parent / "ledger.sqlite", "SELECT record_hash FROM locks WHERE stage='answer'")
    assert resolved["lineage"] == {
        "parent_run": str(parent.resolve()),
        "parent_protocol_sha256": resolved["lineage"]["parent_protocol_sha256"],
        "parent_answer_lock_sha256": lock[0][0]}
    assert (child / "tables" / "answers.jsonl").read_text() == \
        (parent / "tables" / "answers.jsonl").read_text()
    results = json.loads((child / "results.json").read_text())
    parent_results = json.loads((parent / "results.json").read_text())
    assert "semantic" in results["kernels"] and "semantic" not in parent_results["kernels"]
    for key in ("within", "cross", "d_hat"):  # same answers; the bootstrap is now joint
        assert results["kernels"]["exact"][key] == parent_results["kernels"]["exact"][key]
    assert query(child / "ledger.sqlite",
                 "SELECT COUNT(*) FROM attempts WHERE stage='answer' AND outcome!='accepted'"
                 ) == [(0,)]
    capsys.readouterr()
    assert exit_code(["export", str(child), "--out", str(tmp_path / "art")]) == 0
    assert exit_code(["verify", str(tmp_path / "art")]) == 0
    out = capsys.readouterr().out
    assert f"lineage: re-judged from run {parent.resolve()}" in out
    assert "claims reproduce" in out


def test_rejudge_refuses_a_run_without_an_answer_lock_and_a_changed_parent(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.fakes.rag_service import FakeRagService

    write_world(tmp_path, n=6)
    (tmp_path / "judge.toml").write_text('[judge]\nkind = "rule"\n')
    with FakeRagService() as svc:
        proto = write_protocol(tmp_path, svc, size=6)
        assert exit_code(["run", str(proto), "--run-dir", str(tmp_path / "p"),
                      "--progress", "silent"]) == 0
    db = tmp_path / "p" / "ledger.sqlite"
    import sqlite3

    with sqlite3.connect(db) as conn:  # tamper with an accepted answer behind the ledger
        conn.execute("DROP TRIGGER cells_no_update")
        conn.execute("UPDATE cells SET payload = replace(payload, 'answer', 'ANSWER') "
                     "WHERE stage='answer' AND rowid = (SELECT MIN(rowid) FROM cells "
                     "WHERE stage='answer')")
    capsys.readouterr()
    assert exit_code(["rejudge", str(tmp_path / "p"), "--judge", str(tmp_path / "judge.toml"),
                  "--out", str(tmp_path / "c"), "--progress", "silent"]) == 2
    err = capsys.readouterr().err
    assert "error:" in err and "answer" in err, err
    assert not (tmp_path / "c" / "results.json").exists()
