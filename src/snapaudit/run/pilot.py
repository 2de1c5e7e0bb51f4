"""The pilot of ``snapaudit plan`` read from a run directory (its tables and results)."""

from __future__ import annotations

import json
from pathlib import Path

from snapaudit import tables
from snapaudit.errors import ConfigError, InputError
from snapaudit.run.rundir import RunDir
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
    old = old or _str(comparison.get("old"))
    new = new or _str(comparison.get("new"))
    if not old or not new:
        raise ConfigError(f"{run_dir}: no results.json to name the states; give --old and --new")
    answers_path = rd.table("answers")
    if not answers_path.exists():
        raise InputError("pilot answers not found", path=str(answers_path))
    rows = tables.read_answers(answers_path)
    grid = AnswerGrid.from_rows(rows, path=str(answers_path))
    kernels: dict[str, Kernel] = {
        "exact": ExactKernel(grid, normalizer(str(comparison.get("benchmark", "nq"))))}
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
    return pilot_from_values(values, grid.repeats, source=str(run_dir), groups=groups)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) else None


def _run_settings(results: Path) -> tuple[dict[str, object], str | None]:
    if not results.exists():
        return {}, None
    try:
        doc = json.loads(results.read_text(encoding="utf-8"))
        semantic = (doc.get("kernels") or {}).get("semantic") or {}
        return dict(doc["comparison"]), semantic.get("judge")
    except (ValueError, KeyError, TypeError, AttributeError) as exc:
        raise InputError(f"not a results document ({exc})", path=str(results)) from None
