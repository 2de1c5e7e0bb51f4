"""The comparison view's rows: one per changed question, old and new answers side by side.

A row holds the old and new answers (repeats stacked; identical answers collapsed with a
count), EM marks when gold is open, the kernel's verdicts on the old x new pairs, the
question's contribution to D (D_i / n, pp), the evidence diff, and *tags* that the view's
filters select on. Filters are a list (:data:`FILTERS`): to add one, append a
:class:`RowFilter` whose ``test`` reads the :class:`RowContext` (results, grid, kernel, gold).

A question is listed by the rule of :func:`snapaudit.stats.changes.is_listed` (its
normalized answers differ between any two of its answers in any state, it is a strict flip,
or its D_i is not 0); at most :data:`MAX_ROWS` rows, largest |contribution| first.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from snapaudit.report import trajectories
from snapaudit.report.drilldown import path_letters
from snapaudit.report.load import RunView
from snapaudit.report.model import AnswerGroup, Comparison, ComparisonRow
from snapaudit.report.secondary import negative_flip_ids
from snapaudit.stats.analysis import AnalysisResult
from snapaudit.stats.changes import is_listed
from snapaudit.stats.churn import per_question
from snapaudit.stats.kernels import AnswerGrid, ExactKernel, Kernel, SemanticKernel
from snapaudit.stats.normalize import Normalizer, normalizer
from snapaudit.stats.overlap import changed_ids
from snapaudit.tables import AnswerRef, AnswerRow, PairLabel

MAX_ROWS = 1000
EM_LEGEND = ("[M] the answer matches a gold answer after normalization (exact match); "
             "[C] it does not, but contains one as a run of whole words (a sentence naming "
             "the gold answer); [N] neither. Shown only once gold is unlocked.")


@dataclass(frozen=True)
class RowContext:
    """What a filter may read about one question."""

    qid: str
    results: AnalysisResult
    grid: AnswerGrid
    kernel: Kernel
    old: str
    new: str
    gold: tuple[str, ...] | None
    em: Callable[[str], bool | None]
    # the question's rows per state, repeat order, and the benchmark's normalization
    rows: Mapping[str, Sequence[AnswerRow]] = field(default_factory=dict)
    normalize: Normalizer = str


@dataclass(frozen=True)
class RowFilter:
    key: str
    label: str
    test: Callable[[RowContext], bool]


def _flip_ids(ctx: RowContext) -> set[str]:
    return set(ctx.results.flips.question_ids)


def _em_transition(ctx: RowContext) -> bool:
    """Some matched repeat j is an EM match in one state and not in the other."""
    if ctx.gold is None:
        return False
    for j in range(1, ctx.grid.repeats + 1):
        a = ctx.em(ctx.grid.answer(ctx.qid, AnswerRef(ctx.old, j)))
        b = ctx.em(ctx.grid.answer(ctx.qid, AnswerRef(ctx.new, j)))
        if a != b:
            return True
    return False


def _changed(ctx: RowContext) -> bool:
    return any(not ctx.kernel.same(ctx.qid, a, b)
               for a in ctx.grid.refs(ctx.old) for b in ctx.grid.refs(ctx.new))


FILTERS: list[RowFilter] = [
    RowFilter("flip", "strict flips", lambda ctx: ctx.qid in _flip_ids(ctx)),
    RowFilter("em", "EM transitions (match ↔ nonmatch)", _em_transition),
    RowFilter("negative", "negative flips (EM match → nonmatch)",
              lambda ctx: ctx.qid in negative_flip_ids(ctx.results)),
    RowFilter("changed", "old ≠ new (some cross pair different)", _changed),
]


# beside FILTERS when the answers carry steps (an agent's trajectories)
def _on_rows(test: trajectories.Test) -> Callable[[RowContext], bool]:
    return lambda ctx: test(ctx.rows, ctx.old, ctx.new, ctx.normalize)


TRAJECTORY_FILTERS: list[RowFilter] = [RowFilter(key, label, _on_rows(test))
                                       for key, label, test in trajectories.FILTERS]


def _kernel(view: RunView, grid: AnswerGrid) -> tuple[Kernel, str]:
    semantic = view.results.kernels.get("semantic")
    judge = semantic.judge if semantic is not None else None
    if view.labels and judge:
        return SemanticKernel(view.labels, str(judge)), f"semantic kernel (judge {judge})"
    bench = view.results.comparison.benchmark
    return ExactKernel(grid, normalizer(bench)), "exact kernel (no judge)"


def _groups(texts: Sequence[str], mark: Callable[[str], str]) -> tuple[AnswerGroup, ...]:
    counts: dict[str, int] = {}
    for t in texts:
        counts[t] = counts.get(t, 0) + 1
    return tuple(AnswerGroup(t, c, mark(t)) for t, c in counts.items())


def _mark(normalized: str, gold: set[str] | None) -> str:
    """"M" (exact match), "C" (contains a gold answer), "N" (neither), "" (no gold)."""
    if gold is None:
        return ""
    if normalized in gold:
        return "M"
    return "C" if any(f" {g} " in f" {normalized} " for g in gold) else "N"


def _verdicts(kernel: Kernel, grid: AnswerGrid, qid: str, old: str, new: str) -> str:
    cross = [kernel.same(qid, a, b) for a in grid.refs(old) for b in grid.refs(new)]

    def within(state: str) -> str:
        pairs = [kernel.same(qid, a, b) for a, b in itertools.combinations(grid.refs(state), 2)]
        return f"{sum(pairs)}/{len(pairs)}"

    return (f"old × new: {sum(cross)}/{len(cross)} same; within old {within(old)}, "
            f"within new {within(new)} same")


def comparison(view: RunView, filters: Sequence[RowFilter] | None = None) -> Comparison:
    """The rows of the comparison view of a run (plain data; renderers escape)."""
    comp = view.results.comparison
    old, new = comp.old, comp.new
    grid = AnswerGrid.from_rows(view.answers)
    kernel, kernel_name = _kernel(view, grid)
    d = per_question(grid, kernel, old, new).d
    bench = normalizer(comp.benchmark)
    rows_by_q: dict[str, list[AnswerRow]] = {}
    for row in view.answers:
        rows_by_q.setdefault(row.question_id, []).append(row)
    labels_by_q: dict[str, list[PairLabel]] = {}
    for lab in view.labels:
        labels_by_q.setdefault(lab.question_id, []).append(lab)
    steps = any(r.steps is not None for r in view.answers)
    active = list((FILTERS + TRAJECTORY_FILTERS * steps) if filters is None else filters)
    flips = set(view.results.flips.question_ids)
    states = [s for s in view.states if s in grid.states]
    rows, unchanged = [], 0
    for i, qid in enumerate(grid.question_ids):
        gold = view.gold.get(qid) if view.gold is not None else None
        norm_gold = {bench(g) for g in gold} if gold is not None else None

        def em(text: str, ng: set[str] | None = norm_gold) -> bool | None:
            return None if ng is None else bench(text) in ng

        def mark(text: str, ng: set[str] | None = norm_gold) -> str:
            return _mark(bench(text), ng)

        texts = {s: [grid.answer(qid, r) for r in grid.refs(s)] for s in states}
        if not is_listed((t for ts in texts.values() for t in ts), bench, qid in flips,
                         float(d[i])):
            unchanged += 1
            continue
        per_state = {s: sorted((r for r in rows_by_q[qid] if r.state == s),
                               key=lambda r: r.repeat) for s in states}
        ctx = RowContext(qid, view.results, grid, kernel, old, new, gold, em, per_state, bench)
        first = rows_by_q[qid][0]
        rows.append(ComparisonRow(
            id=qid, question=first.question or "",
            old=_groups(texts[old], mark), new=_groups(texts[new], mark),
            verdicts=_verdicts(kernel, grid, qid, old, new), d_i=float(d[i]),
            contribution_pp=100 * float(d[i]) / grid.n,
            tags=tuple(f.key for f in active if f.test(ctx)),
            path=path_letters(per_state, states, labels_by_q.get(qid, [])),
            plant=str((view.plants or {}).get(qid, {}).get("kind", "")),
            evidence=tuple(_evidence(grid, qid, old, new)),
            others={s: _groups(texts[s], mark) for s in states if s not in (old, new)},
            trajectories=trajectories.trajectory_sides(per_state, old, new) if steps else ()))
    rows.sort(key=lambda r: (-abs(r.contribution_pp), r.id))
    kept = rows[:MAX_ROWS]
    return Comparison(old, new, kernel_name, tuple(kept), unchanged, len(rows) - len(kept),
                      tuple((f.key, f.label) for f in active), view.gold is not None)


def _evidence(grid: AnswerGrid, qid: str, old: str, new: str) -> list[dict[str, Any]]:
    """Documents that left / entered the top-k from old to new (first repeat's lists), and
    those kept under the same id whose text changed (content hashes differ, when recorded)."""
    a, b = grid.doc_ids.get((qid, old), (None,))[0], grid.doc_ids.get((qid, new), (None,))[0]
    if a is None or b is None:
        return []
    hashes = grid.doc_hashes or {}
    changed = changed_ids(a, hashes.get((qid, old), (None,))[0], b,
                          hashes.get((qid, new), (None,))[0]) or []
    return [{"from": old, "to": new, "entered": [x for x in b if x not in a],
             "left": [x for x in a if x not in b], "changed": changed,
             "kept": len([x for x in a if x in b and x not in changed])}]
