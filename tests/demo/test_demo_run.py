"""The whole demo on the embedded local generator (slow: a real model on CPU)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from snapaudit.demo.run import DemoConfig, run_demo
from snapaudit.progress import SilentProgress


@pytest.mark.slow
@pytest.mark.local_llm
@pytest.mark.timeout(1800)  # a real model on CPU; about 1 minute on an idle 2-core machine
def test_demo_runs_to_a_report(smollm2_path: Path, tmp_path: Path) -> None:
    if importlib.util.find_spec("snapaudit.testbed.system") is None:
        pytest.skip("the testbed system is not available")
    outcome = run_demo(DemoConfig(tmp_path / "demo", questions=5, seed=7), SilentProgress())
    assert outcome.report_html.exists() and outcome.report_md.exists()
    assert set(outcome.results["kernels"]) == {"exact", "semantic"}
    assert outcome.results["comparison"]["questions"] == 5
    assert outcome.plant_score is not None and outcome.plant_score["planted"] >= 2
    html = outcome.report_html.read_text()
    assert "Demo world: planted changes" in html and "Planted flips recovered" in html


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_demo_through_llama_cpp_server_finishes(smollm2_path: Path, tmp_path: Path) -> None:
    """``snapaudit demo --llama-server PORT``: auto finds json_object_schema, every answer
    cell is accepted within 1.25 attempts on average (the string cap ends each answer)."""
    import contextlib
    import socket
    import sqlite3

    from snapaudit.testbed.generate.llama_server import server_available

    problem = server_available()
    if problem:
        pytest.skip(problem)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    outcome = run_demo(DemoConfig(tmp_path / "demo", questions=5, seed=7,
                                  llama_server_port=port), SilentProgress())
    assert outcome.report_html.exists()
    assert outcome.results["comparison"]["questions"] == 5
    run = tmp_path / "demo" / "run-llama-server"
    assert 'response_format = "json_object_schema"' in (
        run / "protocol.resolved.toml").read_text()
    with contextlib.closing(sqlite3.connect(run / "ledger.sqlite")) as db:
        cells = db.execute("SELECT COUNT(*) FROM cells WHERE stage='answer'").fetchone()[0]
        attempts = db.execute("SELECT COUNT(*) FROM attempts WHERE stage='answer'").fetchone()[0]
    assert cells == 5 * 4 * 2 and attempts <= 1.25 * cells
