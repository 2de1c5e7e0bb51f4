"""A run with ``[design] looks = K``: blocks, look locks, an early stop, and what a rerun,
a resume after a kill and the verifier make of them."""

from __future__ import annotations

import json
import signal
import sqlite3
import time
from pathlib import Path

import pytest

from snapaudit.errors import VerificationError
from tests.fakes.rag_service import FakeRagService
from tests.helpers.cli import exit_code, run_cli
from tests.helpers.protocol import write_protocol, write_world

N = 80  # the fake plants churn on about a quarter of the questions: D is large


def _protocol(tmp: Path, svc: FakeRagService, looks: int = 4, size: int = N) -> Path:
    proto = write_protocol(tmp, svc, size=size, run={"concurrency": 2})
    text = proto.read_text(encoding="utf-8").replace("seed = 7\n",
                                                    f"seed = 7\nlooks = {looks}\n", 1)
    proto.write_text(text, encoding="utf-8")
    return proto


def _look_locks(run_dir: Path) -> list[str]:
    con = sqlite3.connect(run_dir / "ledger.sqlite")
    try:
        return [str(r[0]) for r in con.execute("SELECT stage FROM locks ORDER BY seq")]
    finally:
        con.close()


def test_large_churn_stops_early_and_a_rerun_makes_no_call(tmp_path: Path) -> None:
    write_world(tmp_path, n=N)
    run_dir = tmp_path / "run"
    with FakeRagService() as svc:
        proto = _protocol(tmp_path, svc)
        assert exit_code(["run", str(proto), "--run-dir", str(run_dir), "--progress",
                          "silent"]) == 0
        calls = sum(svc.hits.values())
        assert exit_code(["run", str(proto), "--run-dir", str(run_dir), "--progress",
                          "silent"]) == 0
        assert sum(svc.hits.values()) == calls  # stopped: its decision, no call
    results = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    seq = results["sequential"]
    assert seq["stopped"] and seq["stop_reason"] == "incompatible"
    assert seq["looks_done"] < 4 and seq["questions_used"] < N
    # every call made was for a question used: 2 states x 2 repeats each
    assert calls == 4 * seq["questions_used"] <= 0.7 * 4 * N
    assert results["comparison"]["questions"] == seq["questions_used"]
    assert results["verdict"]["key"] == "incompatible"
    stages = _look_locks(run_dir)
    assert stages[:seq["looks_done"]] == [f"look:{k}" for k in range(1, seq["looks_done"] + 1)]
    assert stages[seq["looks_done"]:] == ["answer", "semantic", "gold"]


def test_the_artifact_recomputes_every_look(tmp_path: Path) -> None:
    from snapaudit.artifact.export import claims, export_artifact
    from snapaudit.artifact.verify import verify_artifact

    write_world(tmp_path, n=N)
    with FakeRagService() as svc:
        proto = _protocol(tmp_path, svc)
        assert exit_code(["run", str(proto), "--run-dir", str(tmp_path / "run"),
                          "--progress", "silent"]) == 0
    art = export_artifact(tmp_path / "run", tmp_path / "art")
    assert verify_artifact(art).checked > 0
    # a forger who edits a look's bound, its claims and the manifest
    forged = _copy(art, tmp_path / "f1")
    results = json.loads((forged / "results.json").read_text(encoding="utf-8"))
    results["sequential"]["looks"][0]["kernels"]["exact"]["lcb"] += 1.0
    (forged / "results.json").write_text(json.dumps(results), encoding="utf-8")
    (forged / "claims.json").write_text(json.dumps(claims(results)), encoding="utf-8")
    _rehash(forged)
    with pytest.raises(VerificationError, match=r"claim sequential\.looks\[0\]\.kernels"
                                                r"\.exact\.lcb: stated"):
        verify_artifact(forged)
    # a forger who rewrites the first look's decision and re-chains every lock after it
    forged = _copy(art, tmp_path / "f2")
    locks = json.loads((forged / "locks.json").read_text(encoding="utf-8"))
    locks[0][0]["content"]["decision"] = "compatible"
    _rechain(locks)
    (forged / "locks.json").write_text(json.dumps(locks), encoding="utf-8")
    _rehash(forged)
    with pytest.raises(VerificationError, match="look 1 lock: decision differs from the "
                                                "recomputation"):
        verify_artifact(forged)


def _copy(art: Path, dest: Path) -> Path:
    import shutil

    shutil.copytree(art, dest)
    return dest


def _rehash(root: Path) -> None:
    from snapaudit.hashing import sha256_file

    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    manifest["files"] = {f: sha256_file(root / f) for f in manifest["files"]}
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def _rechain(locks: list[list[object]]) -> None:
    from snapaudit.run.record.locks import LockRecord, record_hash

    prev = None
    for pair in locks:
        record = dict(pair[0])  # type: ignore[call-overload]
        record["prev_hash"] = prev
        pair[0] = record
        prev = pair[1] = record_hash(LockRecord.model_validate(record))


def test_a_run_killed_between_looks_resumes_to_the_uninterrupted_answers(
        tmp_path: Path) -> None:
    write_world(tmp_path, n=N)
    with FakeRagService(latency_s=0.01) as svc:
        proto = _protocol(tmp_path, svc, looks=4)
        whole = tmp_path / "whole"
        assert exit_code(["run", str(proto), "--run-dir", str(whole), "--progress",
                          "silent"]) == 0
        killed = tmp_path / "killed"
        proc = run_cli(proto, killed)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            if (killed / "ledger.sqlite").exists() and "look:1" in _safe_locks(killed):
                break
            time.sleep(0.01)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert proc.stderr is not None
        proc.stderr.close()
        assert "look:1" in _safe_locks(killed) and "gold" not in _safe_locks(killed)
        assert exit_code(["run", str(proto), "--run-dir", str(killed), "--progress",
                          "silent"]) == 0
    for name in ("answers.jsonl", "labels.jsonl"):
        assert (killed / "tables" / name).read_bytes() == (whole / "tables" / name).read_bytes()
    a = json.loads((whole / "results.json").read_text(encoding="utf-8"))
    b = json.loads((killed / "results.json").read_text(encoding="utf-8"))
    assert a["sequential"] == b["sequential"] and a["kernels"] == b["kernels"]


def _safe_locks(run_dir: Path) -> list[str]:
    try:
        return _look_locks(run_dir)
    except sqlite3.Error:
        return []


def test_changing_looks_after_the_first_look_is_refused_naming_the_key(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_world(tmp_path, n=N)
    with FakeRagService() as svc:
        proto = _protocol(tmp_path, svc, looks=4)
        run_dir = tmp_path / "run"
        assert exit_code(["run", str(proto), "--run-dir", str(run_dir), "--progress",
                          "silent"]) == 0
        capsys.readouterr()
        assert exit_code(["run", str(proto), "--run-dir", str(run_dir), "--progress",
                          "silent", "--set", "design.looks=2"]) == 2
        assert "design.looks" in capsys.readouterr().err
        assert exit_code(["run", str(proto), "--run-dir", str(run_dir), "--progress",
                          "silent", "--set", "gate.margin_pp=5"]) == 2
        assert "gate.margin_pp" in capsys.readouterr().err


def test_a_first_block_under_ten_questions_is_refused_before_anything_is_written(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_world(tmp_path, n=30)
    with FakeRagService() as svc:
        proto = _protocol(tmp_path, svc, looks=4, size=30)
        assert exit_code(["run", str(proto), "--run-dir", str(tmp_path / "run"),
                          "--progress", "silent"]) == 2
        assert sum(svc.hits.values()) == 0
    err = capsys.readouterr().err
    assert "first block of 7 question(s)" in err and "Traceback" not in err
    assert not (tmp_path / "run" / "ledger.sqlite").exists()
