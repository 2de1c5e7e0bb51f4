"""examples/langchain and examples/llamaindex end to end: a run SIGKILLed mid-stage and
resumed ends with exactly the answers (and document ids) of an uninterrupted run.

The examples share one llama.cpp model between both states at ``concurrency = 4``; the
copies killed here set ``concurrency = 1`` so that the order of calls is fixed as well, and
the example as shipped (four threads on one model: the adapter's lock serializes the model,
its prompt cache is reset per call) gives the very same answers. So does the example in
worker processes (``isolation = "process"``) whose target aborts its process once: the
crashed attempt is retried with its seed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adapters.example_runs import CELLS, cells, copy_example, finish, killed_and_clean
from tests.adapters.frameworks import require_frameworks
from tests.helpers.ledger_view import accepted_seeds, query

require_frameworks()
pytestmark = [pytest.mark.local_llm, pytest.mark.slow]


@pytest.mark.parametrize("name", ["langchain", "llamaindex"])
def test_example_killed_and_resumed_gives_the_uninterrupted_answers(
        name: str, tmp_path: Path, smollm2_path: Path) -> None:
    proto, shipped = copy_example(name, tmp_path)
    killed, clean, _ = killed_and_clean(proto, proto, tmp_path)
    resumed, uninterrupted = cells(killed), cells(clean)
    assert len(uninterrupted) == CELLS
    assert {k: v["answer"] for k, v in resumed.items()} == \
        {k: v["answer"] for k, v in uninterrupted.items()}
    assert resumed == uninterrupted  # the document ids too
    assert all(v["doc_ids"][0].startswith("p") for v in resumed.values())  # stable ids
    assert accepted_seeds(killed / "ledger.sqlite", 0) == \
        accepted_seeds(clean / "ledger.sqlite", 0)
    assert query(killed / "ledger.sqlite",
                 "SELECT COUNT(*) FROM attempts WHERE outcome='interrupted'")[0][0] >= 1
    results = json.loads((killed / "results.json").read_text())
    assert "warnings" not in results  # short answers, ids shared by both indexes
    parallel = tmp_path / "parallel"
    finish(shipped, parallel)  # four threads, one shared llama.cpp model: no abort
    assert cells(parallel) == uninterrupted  # and the same answers, whatever the order


CRASHY = """\
import os
from pathlib import Path

import pipeline

MARK = Path(__file__).resolve().parent / "crashed.mark"


def answer(call, **kwargs):
    \"\"\"The example's target, but the first call of question q3 aborts its process.\"\"\"
    if call.question_id == "q3":
        try:
            os.close(os.open(MARK, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
        except FileExistsError:
            pass
        else:
            os.abort()
    return pipeline.answer(call, **kwargs)
"""


def _crashy(shipped: Path) -> Path:
    """The shipped protocol (``concurrency = 4``) with each state's target wrapped by
    ``crashy:answer`` in two worker processes."""
    (shipped.parent / "crashy.py").write_text(CRASHY, encoding="utf-8")
    text = shipped.read_text(encoding="utf-8")
    assert text.count('target = "pipeline:answer"') == 2
    proto = shipped.parent / "crashy.toml"
    assert "\ntimeout_s = 60.0\n" in text
    text = text.replace("\ntimeout_s = 60.0\n", "\ntimeout_s = 600.0\n")  # a loaded machine
    proto.write_text(text.replace(
        'target = "pipeline:answer"',
        'target = "crashy:answer"\nisolation = "process"\nmax_concurrency = 2'),
        encoding="utf-8")
    return proto


@pytest.mark.parametrize("name", ["langchain", "llamaindex"])
def test_example_in_worker_processes_survives_an_abort_with_the_serial_answers(
        name: str, tmp_path: Path, smollm2_path: Path) -> None:
    serial, shipped = copy_example(name, tmp_path)
    crashed = tmp_path / "crashed"
    finish(_crashy(shipped), crashed)
    assert (shipped.parent / "crashed.mark").exists()  # the abort happened
    died = query(crashed / "ledger.sqlite",
                 "SELECT cell_key, attempt_no, error FROM attempts WHERE reason='worker_died'")
    assert len(died) == 1
    key, no, error = died[0]
    assert key.startswith("q3|") and no == 1
    assert "SIGABRT" in error
    failed = query(crashed / "ledger.sqlite", "SELECT cell_key, attempt_no, outcome, reason, "
                   "error FROM attempts WHERE outcome != 'accepted'")
    assert [row[:2] for row in failed] == [(key, 1)], failed
    clean = tmp_path / "clean"
    finish(serial, clean)  # one thread, the example's own target
    answers = cells(crashed)
    assert len(answers) == CELLS
    assert answers == cells(clean)
