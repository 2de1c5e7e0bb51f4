"""End-to-end runs against the loopback fake service."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from snapaudit.errors import ConfigError
from snapaudit.progress import SilentProgress
from snapaudit.run.engine import run_protocol_file
from tests.fakes.rag_service import FakeRagService
from tests.helpers.protocol import write_protocol, write_world


def test_clean_run_writes_tables_locks_and_results(tmp_path: Path) -> None:
    write_world(tmp_path)
    with FakeRagService() as svc:
        proto = write_protocol(tmp_path, svc)
        out = run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
    run = tmp_path / "run"
    assert out.results_path == run / "results.json"
    rows = [json.loads(x) for x in (run / "tables" / "answers.jsonl").read_text().splitlines()]
    assert len(rows) == 8 * 2 * 2
    with sqlite3.connect(run / "ledger.sqlite") as db:
        stages = [r[0] for r in db.execute("SELECT stage FROM locks ORDER BY seq")]
    db.close()
    assert stages == ["answer", "semantic", "gold"]
    assert (run / "tables" / "gold.jsonl").exists()
    assert "exact" in out.results["kernels"]


def test_secret_from_env_is_never_written(tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    write_world(tmp_path)
    monkeypatch.setenv("SNAPAUDIT_FAKE_KEY", "s3cr3t-value")
    with FakeRagService() as svc:
        auth = "".join(f'[systems.{s}.auth]\nenv = "SNAPAUDIT_FAKE_KEY"\n' for s in svc.states)
        proto = write_protocol(tmp_path, svc, extra=auth)
        run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
    files = [p for p in (tmp_path / "run").rglob("*") if p.is_file()]
    assert len(files) >= 6
    for path in files:
        assert b"s3cr3t-value" not in path.read_bytes(), path


def test_missing_secret_is_an_error_before_anything_is_written(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_world(tmp_path)
    monkeypatch.delenv("SNAPAUDIT_FAKE_KEY", raising=False)
    with FakeRagService() as svc:
        auth = "".join(f'[systems.{s}.auth]\nenv = "SNAPAUDIT_FAKE_KEY"\n' for s in svc.states)
        proto = write_protocol(tmp_path, svc, extra=auth)
        with pytest.raises(ConfigError, match="SNAPAUDIT_FAKE_KEY"):
            run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
    assert not (tmp_path / "run").exists()
