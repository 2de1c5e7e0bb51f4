"""Bootstraps drawn in the worker thread give the bytes the sequential analysis gives."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import numpy as np
import pytest

from snapaudit.stats import analysis
from snapaudit.stats.analysis import AnalysisConfig, analyze
from snapaudit.stats.bootstrap import BootstrapDraws
from snapaudit.stats.cluster import Resampling
from snapaudit.stats.prefetch import Prefetch
from snapaudit.tables import read_answers, read_gold, read_labels

EXAMPLE = Path(__file__).resolve().parents[2] / "examples"


@pytest.mark.parametrize("ladder", [("n0", "n1", "n3", "n7"), None])
def test_worker_draws_equal_the_inline_draws(ladder: tuple[str, ...] | None,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    answers = read_answers(EXAMPLE / "answers.jsonl")
    labels = read_labels(EXAMPLE / "labels.jsonl", answers)
    gold = read_gold(EXAMPLE / "gold.jsonl")
    config = AnalysisConfig(old="n0", new="n3", ladder=ladder, draws=3000, seed=4)
    threads: list[str] = []
    draw = Resampling.bootstrap

    def recorded(self: Resampling, values: np.ndarray, draws: int, seed: int) -> BootstrapDraws:
        threads.append(threading.current_thread().name)
        return draw(self, values, draws, seed)

    monkeypatch.setattr(Resampling, "bootstrap", recorded)
    threaded = analyze(answers, config=config, labels=labels, gold=gold).to_json()
    in_worker = [t for t in threads if t.startswith("snapaudit-bootstrap")]
    threads.clear()
    inline = analysis._analyze(answers, config, labels, gold, Prefetch()).to_json()
    assert json.dumps(threaded) == json.dumps(inline)
    assert threaded["judges"] is not None  # two judges: the agreement bootstrap too
    assert len(in_worker) == 3  # gold (flip rates, utility deltas) and judges; D is exact
    assert not any(t.startswith("snapaudit-bootstrap") for t in threads)
