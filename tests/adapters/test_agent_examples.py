"""examples/langgraph and examples/llamaindex_agent end to end through ``snapaudit run`` (the
CLI, a Python system) against the loopback tool-calling fake (``AGENT_BASE_URL``): the run
gives trajectory kernels, and a run SIGKILLed mid-stage and resumed ends with exactly the
cells (answers, document ids, steps) and seeds of an uninterrupted run; the async targets
(``agent:aanswer``) give the sync targets' cells.

The killed copy runs at ``concurrency = 1``; the uninterrupted one as shipped (four agents
at once): each reply depends only on the question, the index and the call's seed."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.adapters.example_runs import CELLS, cells, copy_example, finish, killed_and_clean
from tests.adapters.frameworks import require_agent_frameworks
from tests.fakes.tool_llm import ToolLLMServer, first_query
from tests.helpers.ledger_view import accepted_seeds, query

require_agent_frameworks()
pytestmark = pytest.mark.slow


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[ToolLLMServer]:
    """The fake, slow enough (0.1 s a reply, two replies a call) to be killed mid-stage; the
    CLI's children find it through the environment."""
    with ToolLLMServer(latency_s=0.1) as running:
        monkeypatch.setenv("AGENT_BASE_URL", running.base_url)
        yield running


@pytest.mark.parametrize("name", ["langgraph", "llamaindex_agent"])
def test_agent_example_killed_and_resumed_gives_the_uninterrupted_trajectories(
        name: str, tmp_path: Path, server: ToolLLMServer) -> None:
    serial, shipped = copy_example(name, tmp_path)
    killed, clean, seen = killed_and_clean(serial, shipped, tmp_path)
    resumed, uninterrupted = cells(killed), cells(clean)
    assert len(uninterrupted) == CELLS
    assert all(resumed[k] == v for k, v in seen.items())  # accepted cells never redone
    assert resumed == uninterrupted  # answers, ids and steps
    seeds = accepted_seeds(clean / "ledger.sqlite", 0)
    assert accepted_seeds(killed / "ledger.sqlite", 0) == seeds
    assert query(killed / "ledger.sqlite",
                 "SELECT COUNT(*) FROM attempts WHERE outcome='interrupted'")[0][0] >= 1
    questions = {json.loads(line)["id"]: json.loads(line)["question"] for line in
                 (shipped.parent / "questions.jsonl").read_text().splitlines()}
    for key, cell in uninterrupted.items():  # one search per call, the fake's query
        (step,) = cell["steps"]
        assert step["tool"] == "search"
        assert step["input"] == first_query(questions[key.split("|")[0]], seeds[key])
        assert step["doc_ids"] == cell["doc_ids"] and 1 <= len(step["doc_ids"]) <= 2
    _check_results(json.loads((clean / "results.json").read_text()), uninterrupted)
    assert json.loads((killed / "results.json").read_text())["trajectory"] == \
        json.loads((clean / "results.json").read_text())["trajectory"]


def _check_results(results: dict[str, Any], cells: dict[str, Any]) -> None:
    """The trajectory section: one search everywhere (tools 100 / 100); the new passages
    p07 and p08 (v2 only) are read in new, never in old."""
    kernels = results["trajectory"]["kernels"]
    assert (kernels["tools"]["within"], kernels["tools"]["cross"]) == (100.0, 100.0)
    assert kernels["documents"]["d_hat"] > 0
    read = {state: {d for k, c in cells.items() if k.split("|")[1] == state
                    for d in c["doc_ids"]} for state in ("old", "new")}
    assert {"p07", "p08"} <= read["new"] and not {"p07", "p08"} & read["old"]
    changed = results["trajectory"]["changed_pairs"]
    assert changed["total"] == changed["same_queries"] + changed["different_queries"] > 0


@pytest.mark.parametrize("name", ["langgraph", "llamaindex_agent"])
def test_agent_example_awaited_gives_the_sync_targets_cells(
        name: str, tmp_path: Path, server: ToolLLMServer) -> None:
    """``target = "agent:aanswer"`` (``ainvoke``; the workflow awaited on the run's loop)."""
    _, shipped = copy_example(name, tmp_path)
    text = shipped.read_text(encoding="utf-8")
    assert text.count('target = "agent:answer"') == 2
    awaited = shipped.with_name("awaited.toml")
    awaited.write_text(text.replace('target = "agent:answer"', 'target = "agent:aanswer"'),
                       encoding="utf-8")
    finish(awaited, tmp_path / "awaited")
    finish(shipped, tmp_path / "sync")
    assert len(cells(tmp_path / "awaited")) == CELLS
    assert cells(tmp_path / "awaited") == cells(tmp_path / "sync")
