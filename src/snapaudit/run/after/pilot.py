"""The pilot of ``snapaudit plan`` read from a run directory (its tables and results)."""

from __future__ import annotations

from pathlib import Path

from snapaudit import tables
from snapaudit.errors import ConfigError, InputError
from snapaudit.results import read_results
from snapaudit.run.record.rundir import RunDir
from snapaudit.stats.analysis import Comparison
from snapaudit.stats.churn import per_question
from snapaudit.stats.cluster import resampling
from snapaudit.stats.kernels import AnswerGrid, ExactKernel, Kernel, SemanticKernel
from snapaudit.stats.normalize import normalizer
from snapaudit.stats.plan import Pilot, pilot_from_values


def pilot_from_run(path: Path, *, old: str | None = None, new: str | None = None,
                   judge: str | None = None) -> Pilot:
    """Per-question D_i of a run directory (or its results.json), via the analysis core.

    Reads ``tables/answers.jsonl`` and, when present, ``tables/labels.jsonl``; old, new, the
    benchmark and the judge default to those of ``results.json``. Answer rows with ``cluster``
    labels give the pilot its design effect.
    """
    rd = RunDir(path.parent if path.is_file() else path)
    run_dir = rd.path
    comparison, judge_of_run = _run_settings(rd.results_path)
    old = old or (comparison.old if comparison else None)
    new = new or (comparison.new if comparison else None)
    if not old or not new:
        raise ConfigError(f"{run_dir}: no results.json to name the states; give --old and --new")
    answers_path = rd.table("answers")
    if not answers_path.exists():
        raise InputError("pilot answers not found", path=str(answers_path))
    rows = tables.read_answers(answers_path)
    grid = AnswerGrid.from_rows(rows, path=str(answers_path))
    kernels: dict[str, Kernel] = {
        "exact": ExactKernel(grid, normalizer(comparison.benchmark if comparison else "nq"))}
    labels_path = rd.table("labels")
    labels = tables.read_labels(labels_path, rows) if labels_path.exists() else []
    if labels:  # an exact-only run writes an empty labels table
        names = sorted({lab.judge for lab in labels})
        if judge is not None and judge not in names:
            raise ConfigError(f"--judge {judge!r} has no labels in {labels_path}; the labels "
                              f"name {', '.join(names)}")
        chosen = judge or judge_of_run or ("default" if "default" in names else names[0])
        kernels["semantic"] = SemanticKernel(labels, chosen)
    values = {k: per_question(grid, kern, old, new).d for k, kern in kernels.items()}
    groups = resampling(rows, grid.question_ids).groups  # None unless rows name clusters
    return pilot_from_values(values, grid.repeats, source=str(run_dir), groups=groups,
                             states=len(grid.states))


def _run_settings(results: Path) -> tuple[Comparison | None, str | None]:
    """The results' comparison and primary judge (None, None without results)."""
    if not results.exists():
        return None, None
    result = read_results(results).analysis
    semantic = result.kernels.get("semantic")
    return result.comparison, semantic.judge if semantic else None
