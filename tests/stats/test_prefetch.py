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


def test_queued_stealable_work_runs_in_the_waiting_thread() -> None:
    from concurrent.futures import ThreadPoolExecutor

    gate = threading.Event()
    ran: dict[str, str] = {}

    def work(name: str, fail: bool = False) -> str:
        ran[name] = threading.current_thread().name
        if fail:
            raise ValueError(name)
        return name.upper()

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="worker") as pool:
        early = Prefetch(pool)
        early.submit("busy", gate.wait)  # holds the only worker until released
        early.submit("queued", work, "queued")  # not stealable: waits for the worker
        early.submit("a", work, "a", stealable=True)
        early.submit("b", work, "b", True, stealable=True)
        assert early.take_permutations([]) == {}
        with pytest.raises(ValueError, match="b"):
            early._result("b")  # queued: run here, its error raised here
        assert early._result("a") == "A"
        assert ran == {"b": "MainThread", "a": "MainThread"}
        gate.set()
        assert early._result("busy") is True and early._result("queued") == "QUEUED"
        assert ran["queued"].startswith("worker")
        assert early._result("never") is None
    assert Prefetch().pooled is False and Prefetch(None).take("x") is None


def test_a_wait_steals_the_other_queued_work_first() -> None:
    from concurrent.futures import ThreadPoolExecutor

    gate = threading.Event()
    order: list[str] = []

    def work(name: str) -> str:
        order.append(f"{name}@{threading.current_thread().name}")
        if name == "x":
            gate.set()  # the worker is released by the last steal
        return name

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="worker") as pool:
        early = Prefetch(pool)
        early.submit("busy", gate.wait)
        early.submit("x", work, "x", stealable=True)
        early.submit("y", work, "y", stealable=True)
        assert early._result("busy") is True  # while waiting: runs y, then x, here
        assert order == ["y@MainThread", "x@MainThread"]
        assert early._result("x") == "x" and early._result("y") == "y"


def test_gold_draws_started_early_keep_the_sequential_errors() -> None:
    """The gold's draws start before the kernels; an error still surfaces where the
    sequential analysis meets it: a bad label before a bad gold, and a gold error at all."""
    from snapaudit.errors import InputError
    from snapaudit.tables import AnswerRow, PairLabel
    from snapaudit.tables.records import AnswerRef

    rows = [AnswerRow(q, s, j, a) for q, a in (("q1", "Oslo"), ("q2", "Rome"))
            for s in ("A", "B") for j in (1, 2)]
    config = AnalysisConfig(old="A", new="B", draws=200)
    short_gold = {"q1": ("Oslo",)}  # q2 has no gold
    partial = [PairLabel("q1", AnswerRef("A", 1), AnswerRef("A", 2), True)]  # pairs missing
    with pytest.raises(InputError, match="missing pair label"):
        analyze(rows, config=config, labels=partial, gold=short_gold)
    with pytest.raises(InputError) as err:
        analyze(rows, config=config, gold=short_gold)
    assert "q2" in str(err.value)
    done = analyze(rows, config=config, gold={"q1": ("Oslo",), "q2": ("Paris",)})
    assert done.utility is not None and done.secondary.flip_rates is not None
