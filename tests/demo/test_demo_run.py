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


def test_paths_demo_runs_in_its_own_directory(tmp_path: Path) -> None:
    from snapaudit.demo.run import run_settings
    from tests.helpers.cli import exit_code

    assert exit_code(["demo", "--paths", "0", "--out", str(tmp_path / "x")]) == 2
    assert not (tmp_path / "x").exists()

    assert run_settings(DemoConfig(tmp_path, overrides=("x=1",))) == (tmp_path / "run", ["x=1"])
    assert run_settings(DemoConfig(tmp_path, seed=3, paths=3, overrides=("x=1",))) == (
        tmp_path / "run-paths-3", ["testbed.paths.count=3", "testbed.paths.seed=3", "x=1"])


@pytest.mark.slow
def test_demo_with_three_corpus_paths(tmp_path: Path) -> None:
    """``snapaudit demo --paths 3`` on the demo world, answered by the loopback OpenAI fake
    (the embedded model is what the other demo tests exercise; n_threads = 1 is the default,
    so the openai backend accepts it)."""
    from tests.fakes.llm_server import FakeLLMServer
    from tests.testbed.test_testbed_run import responder

    with FakeLLMServer(responder=responder) as srv:
        served = ("generator.backend=openai", "generator.n_threads=1", "generator.model=fake",
                  f'generator.base_url="{srv.openai_base_url}"')
        outcome = run_demo(DemoConfig(tmp_path / "demo", questions=5, seed=7, paths=3,
                                      overrides=served), SilentProgress())
    assert outcome.run_dir == tmp_path / "demo" / "run-paths-3"
    paths = outcome.results["paths"]
    assert paths["count"] == 3 and len(paths["orders"]) == 3
    assert outcome.results["comparison"]["states"][-1] == "p2.n7"
    assert outcome.results["ladder"]["states"] == ["n0", "n1", "n3", "n7"]
    assert set(paths["kernels"]) == {"exact", "semantic"}  # the rule judge labels all states
    md = outcome.report_md.read_text()
    assert "Corpus paths: semantic D per path and step (pp)" in md and "p2.n3" in md
    assert "With 3 paths the interval under-covers" in md
    from snapaudit.report.paths import paths_summary

    assert outcome.record.paths is not None
    lines = paths_summary(outcome.record.paths).splitlines()
    assert lines[0].startswith("corpus paths (3, exact): path-averaged D n1->n7 ")
    assert "per path n1→n7 " in lines[0] and "p2.n1→p2.n7" in lines[0] and len(lines) == 2
