"""A whole audit against a service that echoes the API key and sends terminal escapes:
the key reaches no ledger row, artifact, report or CLI line; bodies are kept as hash, length
and a redacted excerpt."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from tests.fakes.hostile_service import SECRET, SECRET_ENV, HostileService
from tests.helpers.cli import exit_code
from tests.helpers.protocol import write_protocol, write_world


def _auth(svc: HostileService) -> str:
    return "".join(f'[systems.{s}.auth]\nenv = "{SECRET_ENV}"\n' for s in svc.states)


def _errors(run: Path) -> list[str]:
    with sqlite3.connect(run / "ledger.sqlite") as db:
        rows = [str(r[0]) for r in db.execute("SELECT error FROM attempts WHERE error IS NOT "
                                              "NULL")]
    db.close()
    return rows


def test_echoed_key_and_escapes_stay_out_of_every_record(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    write_world(tmp_path)
    monkeypatch.setenv(SECRET_ENV, SECRET)
    kinds = ("echo_text", "echo_500", "escapes", "deep_json", "gzip_bomb")
    with HostileService(fault_share=1.0, faults_per_key=1, fault_kinds=kinds) as svc:
        proto = write_protocol(tmp_path, svc, extra=_auth(svc),
                               run={"max_response_bytes": 1 << 20, "timeout_s": 5.0})
        run = tmp_path / "run"
        assert exit_code(["run", str(proto), "--run-dir", str(run)]) == 0
    assert exit_code(["status", str(run)]) == 0
    assert exit_code(["report", str(run)]) == 0
    assert exit_code(["export", str(run), "--out", str(tmp_path / "artifact")]) == 0
    assert exit_code(["verify", str(tmp_path / "artifact")]) == 0
    out = capsys.readouterr()
    assert SECRET not in out.out + out.err
    errors = _errors(run)
    served = svc.faults_served
    assert sum(served.values()) == 8 * 2 * 2  # the first attempt of every cell was hostile
    assert len(errors) == 8 * 2 * 2 - served["echo_500"]  # a 5xx body is not kept at all
    assert min(served[k] for k in kinds) >= 1
    assert any("sha256" in e and "[REDACTED]" in e for e in errors)
    assert any("response_too_large" in e or "max_response_bytes" in e for e in errors)
    assert any("'RED" in e and "\\u202e" in e for e in errors)  # shown, not obeyed
    assert not any("\x1b" in e or "\x07" in e or "\u202e" in e for e in errors)
    for path in [*run.rglob("*"), *(tmp_path / "artifact").rglob("*")]:
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    attempts = (tmp_path / "artifact" / "ledger" / "answer.attempts.jsonl").read_text()
    assert "[REDACTED]" in attempts and "bad gateway" in attempts


def test_401_echoing_the_key_is_one_clean_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    write_world(tmp_path)
    monkeypatch.setenv(SECRET_ENV, SECRET)
    with HostileService(fault_share=1.0, faults_per_key=99, fault_kinds=("echo_401",)) as svc:
        proto = write_protocol(tmp_path, svc, extra=_auth(svc))
        run = tmp_path / "run"
        assert exit_code(["run", str(proto), "--run-dir", str(run)]) == 2
    err = capsys.readouterr().err
    assert "HTTP 401" in err and "[REDACTED]" in err
    assert SECRET not in err and "\x1b" not in err and "Traceback" not in err
    errors = _errors(run)
    assert errors and all(SECRET not in e and "HTTP 401" in e for e in errors)
