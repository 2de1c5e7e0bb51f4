"""Read what a report needs from a run directory: results, tables, plants and locks.

The report reads the files a run writes (docs/architecture.md, "Tables a run writes"),
never the engine's internals.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snapaudit import results
from snapaudit.errors import InputError
from snapaudit.results import ReviewSummary, RunResults
from snapaudit.run.analysis.review import live_review
from snapaudit.run.record.ledger.store import connect_read_only
from snapaudit.run.record.rundir import RunDir
from snapaudit.stats.analysis import AnalysisResult
from snapaudit.tables import AnswerRow, PairLabel, read_answers, read_gold, read_labels


@dataclass(frozen=True)
class RunView:
    """Everything a report shows, read from disk."""

    run_dir: Path
    record: RunResults  # results.json
    answers: Sequence[AnswerRow]
    labels: list[PairLabel] = field(default_factory=list)
    gold: dict[str, tuple[str, ...]] | None = None
    plants: dict[str, dict[str, Any]] | None = None
    locks: list[dict[str, Any]] = field(default_factory=list)
    # the protocol's [judge] table when the run has a resolved protocol (kind, name, ...)
    judge: dict[str, Any] = field(default_factory=dict)
    # the change review as its table stands now (snapaudit review), None without decisions
    review: ReviewSummary | None = None

    @property
    def results(self) -> AnalysisResult:
        """The analysis of ``record``."""
        return self.record.analysis

    @property
    def states(self) -> list[str]:
        """States in ladder order: the ladder's order when given, then the results' states,
        else first appearance."""
        ladder = self.results.ladder
        states = ladder.states if ladder is not None and ladder.states else None
        if not states:
            states = self.results.comparison.states
        if states:
            return [str(s) for s in states]
        seen: list[str] = []
        for row in self.answers:
            if row.state not in seen:
                seen.append(row.state)
        return seen


def read_results(path: Path) -> RunResults:
    """The run's typed results (:func:`snapaudit.results.read_results`; a document of
    another schema version is refused, naming its version)."""
    if not path.exists():
        raise InputError("results.json not found: the run is not finished; run `snapaudit "
                         "run` to complete it", path=str(path))
    return results.read_results(path)


def read_locks(ledger: Path) -> list[dict[str, Any]]:
    """Lock rows of a ledger as plain dicts (empty when there is no ledger or no locks)."""
    if not ledger.exists():
        return []
    conn = connect_read_only(ledger)
    try:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if "locks" not in tables:
            return []
        cur = conn.execute("SELECT * FROM locks ORDER BY rowid")
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
    finally:
        conn.close()


def _plants(run_dir: Path) -> dict[str, dict[str, Any]] | None:
    for candidate in (run_dir / "plants.json", run_dir / "world" / "plants.json"):
        if candidate.exists():
            data = json.loads(candidate.read_text(encoding="utf-8"))
            questions: dict[str, dict[str, Any]] = data["questions"]
            return questions
    return None


def _judge_table(run_dir: Path) -> dict[str, Any]:
    path = RunDir(run_dir).protocol_path
    if not path.exists():
        return {}
    judge = tomllib.loads(path.read_text(encoding="utf-8")).get("judge") or {}
    return dict(judge) if isinstance(judge, dict) else {}


def load_run(run_dir: str | Path) -> RunView:
    """Read a finished run directory (results.json and tables/)."""
    rd = RunDir(run_dir, read_only=True)
    root = rd.path
    record = read_results(rd.results_path)  # first: an unfinished run has none
    review = None
    if rd.has_ledger():
        with rd:
            rd.ledger()  # every accepted cell checked against its hash and attempt
            review = live_review(rd)
    if not rd.table("answers").exists():
        raise InputError("answer table not found: the run is not finished; run `snapaudit "
                         "run` to complete it", path=str(rd.table("answers")))
    answers = read_answers(rd.table("answers"))
    labels = list(read_labels(rd.table("labels"))) if rd.table("labels").exists() else []
    gold_path = rd.table("gold")
    gold = read_gold(gold_path, "jsonl") if gold_path.exists() else None
    return RunView(run_dir=root, record=record, answers=answers,
                   labels=labels, gold=gold, plants=_plants(root),
                   locks=read_locks(rd.ledger_path), judge=_judge_table(root),
                   review=review)
