"""The ``attribution`` section of a run from its locked rows alone.

One function serves ``snapaudit attribute`` (over the run's ledger) and ``snapaudit verify``
(over an artifact's exported cells, no network): the flagged questions follow from the locked
answers and the primary judge's pair labels, each question's O and N from its locked
evidence (the doc ids of its answers), and the verdicts from the accepted counterfactual
answers and their judge labels (:mod:`snapaudit.run.stages.attribution`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from snapaudit.run.stages import attribution as stage
from snapaudit.stats.attribution import (
    AttributionSection,
    attribute_question,
    attribution_table,
    counterfactual_lists,
)
from snapaudit.stats.churn import per_question
from snapaudit.stats.flips import flip_ids
from snapaudit.stats.kernels import AnswerGrid, ExactKernel, Kernel, SemanticKernel
from snapaudit.stats.normalize import normalizer
from snapaudit.tables import AnswerRow, PairLabel

Ids = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Selection:
    """What ``snapaudit attribute`` was asked to attribute, and how answers are compared."""

    old: str
    new: str
    judge: str | None  # the run's primary judge (None: the exact kernel alone)
    packets: bool  # whether that judge also judged the counterfactual answers (llm, rule)
    benchmark: str  # the normalizer of the exact kernel
    max_questions: int


def flagged_questions(answers: Sequence[AnswerRow], labels: Sequence[PairLabel],
                      sel: Selection) -> tuple[list[str], set[str]]:
    """Strict flips first, then the largest D_i > 0 (ties by question id); and the flips.
    The semantic kernel of ``sel.judge`` when there are labels, else exact."""
    grid = AnswerGrid.from_rows(answers)
    kernel: Kernel = (SemanticKernel(labels, sel.judge) if labels and sel.judge
                      else ExactKernel(grid, normalizer(sel.benchmark)))
    flips = flip_ids(kernel, grid, sel.old, sel.new)
    pq = per_question(grid, kernel, sel.old, sel.new)
    d = dict(zip(pq.question_ids, pq.d.tolist(), strict=True))
    rest = sorted((q for q in d if d[q] > 0 and q not in flips), key=lambda q: (-d[q], q))
    return [*flips, *rest][:sel.max_questions], set(flips)


def evidence_lists(answers: Sequence[AnswerRow], old: str, new: str) -> dict[str, tuple[Ids, Ids]]:
    """Question -> (O, N): the doc ids its answers of repeat 1 were given in each state."""
    ids: dict[tuple[str, str], Ids] = {(r.question_id, r.state): tuple(r.doc_ids or ())
                                       for r in answers if r.repeat == 1}
    return {q: (ids[(q, old)], ids[(q, new)]) for q, s in ids if s == old and (q, new) in ids}


def section(answers: Sequence[AnswerRow], labels: Sequence[PairLabel], sel: Selection,
            lists: Mapping[str, tuple[Ids, Ids]], cf_cells: stage.Payloads,
            judge_cells: stage.Payloads) -> AttributionSection:
    """The ``attribution`` section of ``results.json``."""
    chosen, flips = flagged_questions(answers, labels, sel)
    norm = normalizer(sel.benchmark)
    same_text: Callable[[str, str], bool] = lambda a, b: norm(a) == norm(b)  # noqa: E731
    variants = {q: list(counterfactual_lists(*lists[q])) for q in chosen}
    labelled = (stage.judge_tables(judge_cells, sel.judge)
                if sel.packets and sel.judge is not None else {})
    agree = stage.agreements(stage.counterfactual_answers(cf_cells), labelled, same_text,
                             variants, stage.endpoint_answers(answers, sel.old, sel.new))
    return attribution_table([attribute_question(q, q in flips, *lists[q], agree.get(q, {}))
                              for q in chosen], sel.max_questions)
