"""A run's results: the analysis of its locked tables with the protocol's settings, and the
sections the run adds (usage, corpus paths, warnings, the review, the attribution), as one
:class:`~snapaudit.results.RunResults`. The engine calls :func:`run_results` once its
stages are locked; nothing here calls a system or changes the ledger.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from snapaudit.judge.registry import judge_kind
from snapaudit.results import RunResults, read_results
from snapaudit.run.analysis.paths import analysis_ladder, paths_section
from snapaudit.run.analysis.review import review_sections
from snapaudit.run.analysis.usage import usage_summary
from snapaudit.run.analysis.warnings import protocol_warnings
from snapaudit.run.gate_profile import effective_gate
from snapaudit.run.record.protocol import Protocol
from snapaudit.run.record.rundir import RunDir
from snapaudit.stats.analysis import AnalysisConfig, analyze
from snapaudit.tables import AnswerRow, PairLabel


def analysis_config(p: Protocol, planned: int | None = None) -> AnalysisConfig:
    """What the protocol says the analysis compares and how (``planned``: the cohort's
    size, which a sequential design's blocks divide)."""
    return AnalysisConfig(
        old=p.states.old, new=p.states.new, ladder=analysis_ladder(p),
        states=tuple(p.states.order), benchmark=p.gold.benchmark, draws=p.bootstrap.draws,
        seed=p.bootstrap.seed, bootstrap=p.bootstrap.method,
        permutations=p.bootstrap.permutations, gate=effective_gate(p),
        primary_judge=p.judge.name if judge_kind(p.judge.kind).labels else None,
        looks=p.design.looks, planned_questions=planned if p.design.looks > 1 else None)


def run_results(protocol: Protocol, rd: RunDir, rows: Sequence[AnswerRow],
                labels: Sequence[PairLabel], gold: Mapping[str, Sequence[str]],
                attribution_locked: bool, planned: int | None = None) -> RunResults:
    """The analysis of ``rows``, ``labels`` and ``gold`` and every section of the run;
    the attribution section of ``snapaudit attribute`` is kept while its stage is locked."""
    analysis = analyze(rows, config=analysis_config(protocol, planned), labels=labels,
                       gold=gold)
    human, review = review_sections(rd)  # snapaudit review's labels and decisions
    previous = (read_results(rd.results_path).attribution
                if attribution_locked and rd.results_path.exists() else None)
    return RunResults(analysis, usage=usage_summary(rd.ledger(), protocol),
                      paths=paths_section(protocol, rows, labels),
                      warnings=protocol_warnings(protocol, rows), review=review,
                      attribution=previous, human=human)
