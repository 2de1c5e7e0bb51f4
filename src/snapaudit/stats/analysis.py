"""``analyze()``: answer tables in, one typed :class:`AnalysisResult` out.

Every number of the results JSON (docs/results-schema.md) is computed by the module that owns
it; this module wires them together in a fixed order and adds nothing of its own.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import numpy as np

from snapaudit.errors import InputError
from snapaudit.stats import agreement as agreement_mod
from snapaudit.stats import prefetch
from snapaudit.stats.agreement import JudgeAgreement
from snapaudit.stats.answer_form import median_words
from snapaudit.stats.bootstrap import Interval
from snapaudit.stats.churn import PerQuestion, per_question
from snapaudit.stats.cluster import Resampling, resampling
from snapaudit.stats.config import AnalysisConfig as AnalysisConfig
from snapaudit.stats.conversation import ConversationSection, conversation
from snapaudit.stats.flips import Flips, flips
from snapaudit.stats.gate import GateResult, evaluate
from snapaudit.stats.kernels import (
    AnswerGrid,
    ExactKernel,
    Kernel,
    SemanticKernel,
    nontransitive_counts,
)
from snapaudit.stats.kernelstats import KernelStats as KernelStats
from snapaudit.stats.kernelstats import kernel_stats
from snapaudit.stats.ladder import Ladder, ladder
from snapaudit.stats.looks import sequential_cut
from snapaudit.stats.metrics import GoldCells, Utility, check_gold, score_grid, utility
from snapaudit.stats.normalize import Normalizer, normalizer
from snapaudit.stats.overlap import Overlap, has_doc_ids, overlap
from snapaudit.stats.power import SampleCheck, sample_check
from snapaudit.stats.prefetch import Prefetch
from snapaudit.stats.primary import semantic_kernel
from snapaudit.stats.secondary import Secondary, secondary
from snapaudit.stats.sequential import Sequential, stop_bounds
from snapaudit.stats.trajectory import trajectories, trajectory_kernels
from snapaudit.stats.trajectory_section import (
    TrajectorySection,
    changed_pairs,
    first_divergence,
)
from snapaudit.stats.transitions import Transitions, transitions
from snapaudit.stats.upper import intervals
from snapaudit.stats.utility import gold_scores
from snapaudit.stats.verdict import Verdict, verdict_of
from snapaudit.tables import AnswerRow, PairLabel

SCHEMA_VERSION = "2"


@dataclass(frozen=True)
class Comparison:
    old: str
    new: str
    questions: int
    repeats: int
    states: tuple[str, ...]
    benchmark: str
    draws: int
    seed: int
    resampled: Resampling = field(default_factory=Resampling)
    bootstrap: str = "draws"  # the configured method: "exact" or "draws"
    # the median words of the old and new answers (stats.answer_form; None: read from a
    # document written before the key)
    answer_words: float | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "old": self.old, "new": self.new, "questions": self.questions,
            "repeats": self.repeats, "states": list(self.states),
            "benchmark": self.benchmark, "draws": self.draws, "seed": self.seed,
            "resampled": self.resampled.to_json(), "bootstrap": self.bootstrap}
        if self.answer_words is not None:
            out["answer_words"] = self.answer_words
        return out


@dataclass(frozen=True)
class AnalysisResult:
    """Everything ``analyze`` computed; ``to_json()`` is the versioned results document
    (read back by :func:`snapaudit.stats.analysis_read.analysis_from_json`, without
    ``per_question``); a run's sections beside it are in :class:`snapaudit.results.RunResults`."""

    comparison: Comparison
    kernels: Mapping[str, KernelStats]
    gate: GateResult
    flips: Flips
    utility: Utility | None = None
    transitions: Mapping[str, Transitions] | None = None
    overlap: Overlap | None = None
    ladder: Ladder | None = None
    judges: JudgeAgreement | None = None
    per_question: Mapping[str, PerQuestion] = field(default_factory=dict, repr=False)
    secondary: Secondary = field(default_factory=lambda: Secondary(Resampling()))
    sample: SampleCheck | None = None
    sequential: Sequential | None = None  # looks > 1 only
    trajectory: TrajectorySection | None = None  # answers with steps only
    conversation: ConversationSection | None = None  # answers with turn answers only

    def verdict(self) -> Verdict:
        """The verdict every output prints (:mod:`snapaudit.stats.verdict`)."""
        return verdict_of(self.gate, self.sample, self.comparison.questions)

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "schema_version": SCHEMA_VERSION,
            "comparison": self.comparison.to_json(),
            "kernels": {k: v.to_json() for k, v in self.kernels.items()},
            "gate": self.gate.to_json(),
            "utility": _utility_json(self.utility, self.secondary),
            "flips": self.flips.to_json(),
            "flip_rates": (self.secondary.flip_rates.to_json()
                           if self.secondary.flip_rates else None),
            "transitions": _transitions_json(self.transitions),
            "overlap": self.overlap.to_json() if self.overlap else None,
            "ladder": self.ladder.to_json() if self.ladder else None,
            "judges": self.judges.to_json() if self.judges else None,
            "distribution_test": (self.secondary.distribution.to_json()
                                  if self.secondary.distribution else None),
            "multiplicity": (self.secondary.multiplicity.to_json()
                             if self.secondary.multiplicity else None),
            "sample": self.sample.to_json() if self.sample else None,
        }
        if self.sequential is not None:  # only then: fixed-design documents are unchanged
            out["sequential"] = self.sequential.to_json()
        if self.trajectory is not None:  # only then: answers without steps are unchanged
            out["trajectory"] = self.trajectory.to_json()
        if self.conversation is not None:  # only then: single-turn answers are unchanged
            out["conversation"] = self.conversation.to_json()
        out["verdict"] = self.verdict().to_json()
        return out


def _utility_json(u: Utility | None, sec: Secondary) -> dict[str, object] | None:
    if u is None:
        return None
    out = u.to_json()
    if sec.utility_delta is not None:
        out["delta"] = {k: v.to_json() for k, v in sec.utility_delta.items()}
    return out


def _transitions_json(t: Mapping[str, Transitions] | None) -> dict[str, object] | None:
    if not t:
        return None
    primary = t.get("semantic") or t["exact"]
    out = primary.to_json()
    out["exact"] = t["exact"].to_json()
    return out


def analyze(answers: Sequence[AnswerRow], *, config: AnalysisConfig,
            labels: Sequence[PairLabel] = (), gold: Mapping[str, Sequence[str]] | None = None
            ) -> AnalysisResult:
    """Audit old vs new: kernels, bootstrap, gate, then utility and diagnostics.

    The bootstraps that still need draws (gold flip rates and deltas, judge agreement) run in
    two worker threads meanwhile (:mod:`snapaudit.stats.prefetch`: the same draws); every check
    raises in the order of the sequential analysis."""
    seq = None
    if config.looks > 1:  # the looks first: the analysis is of the questions they used
        seq, answers, labels = sequential_cut(answers, labels, config)
    pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="snapaudit-bootstrap")
    try:
        return _analyze(answers, config, labels, gold, Prefetch(pool), seq)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _analyze(answers: Sequence[AnswerRow], config: AnalysisConfig,
             labels: Sequence[PairLabel], gold: Mapping[str, Sequence[str]] | None,
             early: Prefetch, seq: Sequential | None = None) -> AnalysisResult:
    grid = AnswerGrid.from_rows(answers)
    grid.require_states([config.old, config.new, *(config.ladder or ())])
    grid = replace(grid, states=_state_order(config, grid.states))
    norm = normalizer(config.benchmark)
    semantic, judges = semantic_kernel(grid, answers, labels, config)
    pair = agreement_mod.judge_pair(judges, semantic.judge) if semantic else None
    if pair:  # the longest draws: started first, taken last
        prefetch.start_agreement(early, labels, pair, config.draws, config.seed)
    # then the gold's, before the kernels (None: an input error, met again below where the
    # sequential analysis meets it)
    started = _start_gold(grid, answers, gold, norm, config, early)
    main: Kernel = semantic if semantic is not None else ExactKernel(grid, norm)
    exact = main if isinstance(main, ExactKernel) else ExactKernel(grid, norm)
    kernels: dict[str, Kernel] = {"exact": exact, **({"semantic": semantic} if semantic else {})}
    pq = {name: per_question(grid, k, config.old, config.new) for name, k in kernels.items()}
    res = started[0] if started else resampling(answers, grid.question_ids)
    values = np.column_stack([pq[n].d for n in kernels])
    # a cluster bootstrap may refuse the clusters (here, as always)
    boot = _bounds(values, res, config, grid.repeats)
    flip = flips(main, grid, config.old, config.new, pq[main.name])
    util, cells = started[1:] if started else _utility(grid, gold, norm, config)
    prefetch.start_permutations(early, kernels, grid, config.old, config.new,
                                config.permutations, config.seed)
    trans = ({n: transitions(grid, gold, norm, k, config.old, config.new, cells)
              for n, k in kernels.items()} if gold is not None else None)
    over = (overlap(grid, config.old, config.new, flip.question_ids)
            if has_doc_ids(grid, config.old, config.new) else None)
    lad = ladder(main, grid, config.ladder, config.old, config.new) if config.ladder else None
    # what needs no draws first, so the main thread waits as little as possible
    stats = _kernel_stats(grid, kernels, pq, config, boot)
    if semantic is not None:
        stats["semantic"] = _with_consistency(stats["semantic"], grid, exact, semantic)
    d_hats = (agreement_mod.judge_d_hats(grid, labels, pair, config.old, config.new,
                                         pq["semantic"]) if pair else None)
    sec = secondary(grid, kernels, main, resampling=res, old=config.old, new=config.new,
                    draws=config.draws, seed=config.seed, permutations=config.permutations,
                    gold=gold, normalize=norm,
                    deltas=(util.em_delta, util.f1_delta) if util else None,
                    ladder=config.ladder, cells=cells, prefetch=early,
                    method=config.bootstrap)
    agree = (prefetch.judge_agreement(early, labels, pair, d_hats, config.draws, config.seed)
             if pair and d_hats is not None else None)
    if seq is not None:  # the gate reads the stopping look's repeated bounds
        stats = {k: replace(s, lcb95=b.lcb, ucb95=b.ucb) if (b := stop_bounds(seq).get(k))
                 else s for k, s in stats.items()}
    traj, traj_pq = _trajectory(answers, grid, norm, exact, config, res)
    gated = {**stats, **(traj.kernels if traj else {})}
    gate = evaluate(config.gate, {k: {"d_hat": s.d_hat, "lcb95": s.lcb95,
                                      **({"ucb95": s.ucb95} if s.ucb95 is not None else {})}
                                  for k, s in gated.items()})
    return AnalysisResult(
        Comparison(config.old, config.new, grid.n, grid.repeats, grid.states, config.benchmark,
                   config.draws, config.seed, res, config.bootstrap,
                   median_words(grid, (config.old, config.new))),
        stats, gate, flip, utility=util, transitions=trans, overlap=over, ladder=lad,
        judges=agree, per_question=pq, secondary=sec,
        sample=sample_check({k: v.d for k, v in {**pq, **traj_pq}.items()}, gate.rules),
        sequential=seq, trajectory=traj,
        conversation=conversation(answers, grid, norm, config, res))


def _trajectory(answers: Sequence[AnswerRow], grid: AnswerGrid, norm: Normalizer,
                exact: ExactKernel, config: AnalysisConfig, res: Resampling
                ) -> tuple[TrajectorySection | None, dict[str, PerQuestion]]:
    """The trajectory kernels and diagnostics when the answers carry steps (the kernels'
    D_i bootstrapped jointly, apart from the answer kernels' draws), and their D_i."""
    found = trajectories(answers, grid, (config.old, config.new))
    if found is None:
        return None, {}
    kernels = trajectory_kernels(found, norm)
    pq = {name: per_question(grid, k, config.old, config.new) for name, k in kernels.items()}
    boot = _bounds(np.column_stack([pq[n].d for n in kernels]), res, config, grid.repeats)
    section = TrajectorySection(
        _kernel_stats(grid, kernels, pq, config, boot),
        changed_pairs(grid, exact, kernels["queries"], config.old, config.new),
        first_divergence(grid, found.cells, norm, config.old, config.new),
        found.without_steps)
    return section, pq


def _start_gold(grid: AnswerGrid, answers: Sequence[AnswerRow],
                gold: Mapping[str, Sequence[str]] | None, norm: Normalizer,
                config: AnalysisConfig, early: Prefetch
                ) -> tuple[Resampling, Utility | None, dict[str, GoldCells] | None] | None:
    """(the resampling, :func:`_utility`) with the gold's draws started, or None (nothing
    started) on an input error, which the caller meets again in the sequential order."""
    try:
        res = resampling(answers, grid.question_ids)
        util, cells = _utility(grid, gold, norm, config)
    except InputError:
        return None
    if gold is not None:
        scores = gold_scores(grid, gold, norm, config.old, config.new, cells)
        prefetch.start_gold(early, scores, res, config.draws, config.seed)
    return res, util, cells


def _utility(grid: AnswerGrid, gold: Mapping[str, Sequence[str]] | None, norm: Normalizer,
             config: AnalysisConfig) -> tuple[Utility | None, dict[str, GoldCells] | None]:
    """Utility per state and the gold scores of every cell (the diagnostics share them)."""
    if gold is None:
        return None, None
    check_gold(grid, gold)
    cells = score_grid(grid, gold, norm, grid.states)
    return utility(grid, gold, norm, grid.states, config.old, config.new, cells), cells


def _state_order(config: AnalysisConfig, present: Sequence[str]) -> tuple[str, ...]:
    """The grid's states in reporting order: the protocol's, else ladder, else old, new."""
    first = config.states or config.ladder or (config.old, config.new)
    ordered = [s for s in dict.fromkeys(first) if s in present]
    return (*ordered, *sorted(s for s in present if s not in ordered))


def _with_consistency(stats: KernelStats, grid: AnswerGrid, exact: ExactKernel,
                      semantic: SemanticKernel) -> KernelStats:
    from snapaudit.stats.consistency import identical_on_grid

    c = identical_on_grid(grid, exact, semantic)
    return replace(stats, identical_pairs=c.identical_pairs,
                   identical_labelled_same=c.labelled_same)


def _bounds(values: np.ndarray, res: Resampling, config: AnalysisConfig, repeats: int
            ) -> tuple[Interval, ...]:
    """The interval of each kernel's D_i (columns of ``values``, jointly bootstrapped; upper
    bounds by :mod:`snapaudit.stats.upper`)."""
    return intervals(values, res, config.draws, config.seed, method=config.bootstrap,
                     repeats=repeats)


def _kernel_stats(grid: AnswerGrid, kernels: Mapping[str, Kernel],
                  pq: Mapping[str, PerQuestion], config: AnalysisConfig,
                  ivs: Sequence[Interval]) -> dict[str, KernelStats]:
    """Within, cross, D and the interval of every kernel (``ivs``: :func:`_bounds`, in
    kernel order)."""
    out: dict[str, KernelStats] = {}
    for name, iv in zip(kernels, ivs, strict=True):
        extra: dict[str, int | str | None] = {}
        kernel = kernels[name]
        if isinstance(kernel, SemanticKernel):
            tri = nontransitive_counts(kernel, grid, (config.old, config.new))
            extra = {"judge": kernel.judge, "nontransitive_triangles": int(tri.sum()),
                     "nontransitive_questions": int((tri > 0).sum())}
        out[name] = kernel_stats(name, pq[name], iv, **extra)
    return out
