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
