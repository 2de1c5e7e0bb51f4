"""``analyze`` with ``looks = K``: the looks taken on an answer table, and the table cut to
the questions the audit used.

The questions are taken in the order of their first appearance in the answers table (a
run writes its table in cohort order), so a run, an imported table and a simulation decide
with the same code: :func:`snapaudit.stats.sequential.take_looks` over the per-question D_i
of the gate's kernels. The analysis that follows is the fixed analysis of the questions up
to the stopping look, with that look's repeated bounds as the gate's ``lcb95``/``ucb95``.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from snapaudit.errors import InputError
from snapaudit.hashing import sha256_json
from snapaudit.stats.churn import per_question
from snapaudit.stats.cluster import Resampling, resampling
from snapaudit.stats.config import AnalysisConfig
from snapaudit.stats.kernels import AnswerGrid, ExactKernel, Kernel
from snapaudit.stats.normalize import normalizer
from snapaudit.stats.primary import semantic_kernel
from snapaudit.stats.sequential import Look, LookData, Sequential, block_sizes, take_looks
from snapaudit.tables import AnswerRow, PairLabel


def appearance(answers: Sequence[AnswerRow]) -> list[str]:
    """Question ids in the order they first appear in the table."""
    ids = getattr(answers, "question_ids", None)  # an AnswerTable keeps them in file order
    if ids is not None:
        return list(ids)
    return list(dict.fromkeys(r.question_id for r in answers))


def look_data(answers: Sequence[AnswerRow], labels: Sequence[PairLabel],
              config: AnalysisConfig) -> tuple[LookData, int]:
    """The per-question D_i of the gate's kernels (those computed) in cohort order, and the
    answer calls of one question (states x repeats)."""
    grid = AnswerGrid.from_rows(answers)
    grid.require_states([config.old, config.new])
    semantic, _ = semantic_kernel(grid, answers, labels, config)
    kernels: dict[str, Kernel] = {"exact": ExactKernel(grid, normalizer(config.benchmark))}
    if semantic is not None:
        kernels["semantic"] = semantic
    names = tuple(k for k in kernels if k in config.gate.kernels())
    index = {q: i for i, q in enumerate(grid.question_ids)}
    order = np.array([index[q] for q in appearance(answers)], dtype=np.intp)
    cols = [per_question(grid, kernels[k], config.old, config.new).d[order] for k in names]
    values = np.column_stack(cols) if cols else np.zeros((grid.n, 0))
    res = resampling(answers, grid.question_ids)
    if res.groups is not None:  # clusters follow their questions into cohort order
        res = Resampling("cluster", res.groups[order])
    data = LookData(values, names, res, grid.repeats, config.draws, config.seed,
                    config.bootstrap)
    return data, len(grid.states) * grid.repeats


def sequential_cut(answers: Sequence[AnswerRow], labels: Sequence[PairLabel],
                   config: AnalysisConfig
                   ) -> tuple[Sequential, Sequence[AnswerRow], Sequence[PairLabel]]:
    """The looks of ``config`` and the answers and labels of the questions they used."""
    data, calls = look_data(answers, labels, config)
    planned = config.planned_questions or data.values.shape[0]
    seq = take_looks(data, config.gate, config.looks, planned, calls_per_question=calls)
    if seq.stop_reason is None:
        need = block_sizes(planned, config.looks)[seq.looks_done]
        raise InputError(f"the answers hold {data.values.shape[0]} questions: look "
                         f"{seq.looks_done + 1} of {config.looks} needs the first {need} of "
                         f"{planned}, and no earlier look decided")
    used = seq.questions_used
    if used == data.values.shape[0]:
        return seq, answers, labels
    keep = set(appearance(answers)[:used])
    return (seq, [r for r in answers if r.question_id in keep],
            [lab for lab in labels if lab.question_id in keep])


def look_record(look: Look, answers: Sequence[AnswerRow], labels: Sequence[PairLabel]
                ) -> dict[str, str]:
    """What the lock of a look binds: its number, its questions and decision, and the
    SHA-256 of the answers and labels it read (canonical order) and of its result."""
    rows = sorted([r.question_id, r.state, r.repeat, r.answer,
                   list(r.doc_ids) if r.doc_ids is not None else None] for r in answers)
    labs = sorted([x.question_id, x.a.state, x.a.repeat, x.b.state, x.b.repeat, x.same,
                   x.judge] for x in labels)
    return {"look": str(look.look), "questions": str(look.questions),
            "decision": look.decision, "answers_sha256": sha256_json(rows),
            "labels_sha256": sha256_json(labs), "result_sha256": sha256_json(look.to_json())}
