"""A finished run directory built without any model: simulated demo answers, hostile text,
and the real results (schema 2) ``snapaudit analyze`` computes from them."""

from __future__ import annotations

import dataclasses
import json
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import pytest

from snapaudit.demo.files import write_world
from snapaudit.demo.simulate import rule_labels, simulate_answers
from snapaudit.demo.world import build_world
from snapaudit.stats.analysis import AnalysisConfig, AnalysisResult, analyze
from snapaudit.tables import AnswerRow, PairLabel, write_answers, write_gold, write_labels

HOSTILE = (
    "<script>document.title='pwned'</script>",
    '"><img src=x onerror="document.title=\'pwned\'">',
    "</script><script>document.title='pwned'</script><!--",
)

LADDER = ("n0", "n1", "n3", "n7")


def analyzed(rows: Sequence[AnswerRow], labels: Sequence[PairLabel] = (),
             gold: Mapping[str, Sequence[str]] | None = None, *, old: str = "n1",
             new: str = "n7", ladder: tuple[str, ...] | None = None,
             permutations: int = 0) -> AnalysisResult:
    """The real (schema 2) results of ``rows``, as ``snapaudit analyze`` computes them."""
    config = AnalysisConfig(old=old, new=new, ladder=ladder, draws=500,
                            permutations=permutations)
    return analyze(rows, config=config, labels=labels, gold=gold)


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
    labels = rule_labels(rows)
    gold: dict[str, tuple[str, ...]] = {str(g["question_id"]): tuple(g["answers"])  # type: ignore[arg-type]
            for g in world.gold}
    write_answers(tables / "answers.jsonl", rows)
    write_labels(tables / "labels.jsonl", labels)
    write_gold(tables / "gold.jsonl", gold)
    results = analyzed(rows, labels, gold, ladder=LADDER, permutations=200)
    (root / "results.json").write_text(json.dumps(results.to_json()), encoding="utf-8")
    shutil.copy(files.plants, root / "plants.json")
    return root


@pytest.fixture()
def run_dir(tmp_path: Path) -> Path:
    return make_run(tmp_path / "run")


@pytest.fixture()
def hostile_run(tmp_path: Path) -> Path:
    return make_run(tmp_path / "run", hostile=True)
