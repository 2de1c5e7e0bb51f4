"""A finished run directory built without any model: simulated demo answers, hostile text."""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from snapaudit.demo.files import write_world
from snapaudit.demo.simulate import rule_labels, simulate_answers
from snapaudit.demo.world import build_world
from snapaudit.tables import write_answers, write_gold, write_labels

HOSTILE = (
    "<script>document.title='pwned'</script>",
    '"><img src=x onerror="document.title=\'pwned\'">',
    "</script><script>document.title='pwned'</script><!--",
)

RESULTS: dict[str, Any] = {
    "schema_version": 1,
    "comparison": {"old": "n1", "new": "n7", "questions": 12, "repeats": 2,
                   "states": ["n0", "n1", "n3", "n7"]},
    "kernels": {
        "exact": {"within": 90.0, "cross": 70.0, "d_hat": 20.0, "lcb95": 8.5,
                  "ci95": [6.25, 33.75], "p_nonpositive": 0.001},
        "semantic": {"within": 91.25, "cross": 72.5, "d_hat": 18.75, "lcb95": 7.0,
                     "ci95": [5.0, 31.25], "p_nonpositive": 0.002},
    },
    "gate": {"passed": True, "rules": [
        {"rule": "exact d_hat >= 3", "value": 20.0, "passed": True},
        {"rule": "exact lcb95 > 0", "value": 8.5, "passed": True},
        {"rule": "semantic lcb95 > 0", "value": 7.0, "passed": True}]},
    "utility": {"n1": {"em": 58.33, "f1": 60.0, "unknown": 16.67},
                "n7": {"em": 62.5, "f1": 64.0, "unknown": 4.17}, "em_delta": 4.17},
    "flips": {"count": 3, "question_ids": ["q002", "q005", "q009"], "contribution_pp": 15.0,
              "rest_pp": 3.75},
    "transitions": {"match_to_match": 50.0, "match_to_nonmatch": 8.33, "nonmatch_to_match": 12.5,
                    "nonmatch_to_same_nonmatch": 20.83,
                    "nonmatch_to_different_nonmatch": 8.33},
    "overlap": {"mean": 5.5, "zero_rate": 0.0, "identical": 25.0,
                "histogram": {"0": 0, "3": 1, "4": 2, "5": 3, "6": 3, "8": 3}},
    "ladder": [{"old": "n0", "new": "n1", "d_hat": 30.0, "flips": 5, "questions": 12},
               {"old": "n1", "new": "n3", "d_hat": 10.0, "flips": 1, "questions": 12},
               {"old": "n3", "new": "n7", "d_hat": 12.5, "flips": 2, "questions": 12},
               {"old": "n1", "new": "n7", "d_hat": 18.75, "flips": 3, "questions": 12}],
}


def make_run(root: Path, *, hostile: bool = False, n_questions: int = 12) -> Path:
    world = build_world(n_questions, seed=3)
    files = write_world(world, root / "world")
    rows = simulate_answers(world, seed=1)
    if hostile:
        rows = [dataclasses.replace(r, answer=HOSTILE[i % 3] if r.state == "n7" else r.answer,
                                    question=r.question + HOSTILE[0])
                if r.question_id in {"q001", "q002"} else r for i, r in enumerate(rows)]
    tables = root / "tables"
    tables.mkdir(parents=True)
    write_answers(tables / "answers.jsonl", rows)
    write_labels(tables / "labels.jsonl", rule_labels(rows))
    write_gold(tables / "gold.jsonl", {g["question_id"]: tuple(g["answers"])  # type: ignore[arg-type]
                                       for g in world.gold})
    (root / "results.json").write_text(json.dumps(RESULTS), encoding="utf-8")
    shutil.copy(files.plants, root / "plants.json")
    return root


@pytest.fixture()
def run_dir(tmp_path: Path) -> Path:
    return make_run(tmp_path / "run")


@pytest.fixture()
def hostile_run(tmp_path: Path) -> Path:
    return make_run(tmp_path / "run", hostile=True)
