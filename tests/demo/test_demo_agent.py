"""``snapaudit demo --agent``: the two-step search agent's rules by hand, and the whole agent
demo on the embedded model (slow): trajectories recorded, the second query following the
first search, the trajectory section and the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snapaudit.demo.agent import REWORD, first_query, keywords, second_query
from snapaudit.demo.run import DemoConfig, run_demo
from snapaudit.errors import ConfigError
from snapaudit.progress import SilentProgress
from snapaudit.systems.python_call import PythonCall
from snapaudit.testbed.retrieval.base import Document


def _doc(text: str) -> Document:
    return Document("d1", "https://demo.example/d1", text)


def test_the_agents_query_rules() -> None:
    assert keywords("What is the national bird of Dindrur?") == "What national bird Dindrur"
    top = _doc("The national bird of Dindrur is Sumpeol.")
    # the top hit's capitalized words the query lacks (stop words and known words left out)
    assert second_query("What is the national bird of Dindrur?", top) == "Sumpeol"
    assert second_query("Sumpeol", _doc("Sumpeol nests in Dindrur and Tairtrend.")) == (
        "Dindrur Tairtrend")
    assert second_query("What is the national bird of Dindrur?", None) == (
        "What national bird Dindrur")
    question = "What is the national bird of Dindrur?"
    worded = [first_query(PythonCall(question, "q", "n1", 1, seed, 1)) for seed in range(400)]
    share = sum(q != question for q in worded) / len(worded)
    assert abs(share - REWORD) < 0.06  # one call in four, by the call's seed
    assert first_query(PythonCall(question, "q", "n7", 2, 5, 1)) == first_query(
        PythonCall(question, "q", "n1", 1, 5, 1))  # the seed alone decides


def test_agent_demo_refuses_the_server_and_paths(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="--agent runs the embedded model"):
        run_demo(DemoConfig(tmp_path / "d", questions=5, agent=True, paths=2),
                 SilentProgress())


@pytest.mark.slow
@pytest.mark.local_llm
@pytest.mark.timeout(1800)  # a real model on CPU
def test_agent_demo_runs_to_a_report(smollm2_path: Path, tmp_path: Path) -> None:
    outcome = run_demo(DemoConfig(tmp_path / "demo", questions=5, seed=7, agent=True),
                       SilentProgress())
    assert outcome.run_dir.name == "run-agent"
    doc = outcome.results
    assert set(doc["kernels"]) == {"exact", "semantic"}
    traj = doc["trajectory"]
    assert set(traj["kernels"]) == {"tools", "queries", "documents"}
    assert traj["kernels"]["tools"]["d_hat"] == 0.0  # two searches, always
    assert traj["rows_without_steps"] == 0
    changed = traj["changed_pairs"]
    assert changed["same_queries"] + changed["different_queries"] == changed["total"]
    rows = [json.loads(x) for x in
            (outcome.run_dir / "tables" / "answers.jsonl").read_text().splitlines()]
    assert len(rows) == 5 * 2 * 2
    corpus = {d["id"]: d["text"] for d in map(json.loads, (
        tmp_path / "demo" / "world" / "corpus.jsonl").read_text().splitlines())}
    for row in rows:  # the second query follows from the first search's top hit
        first, second = row["steps"]
        top = _doc(corpus[first["doc_ids"][0]]) if first["doc_ids"] else None
        assert second["input"] == second_query(first["input"], top)
        assert row["doc_ids"] == list(dict.fromkeys(first["doc_ids"] + second["doc_ids"]))
    assert "Agent trajectories" in outcome.report_md.read_text()
    again = run_demo(DemoConfig(tmp_path / "demo", questions=5, seed=7, agent=True),
                     SilentProgress())  # the same command again: the finished run, unchanged
    assert again.results == doc
