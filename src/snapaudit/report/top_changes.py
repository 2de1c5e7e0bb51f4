"""What changed, for the terminal: the questions with the largest contributions to D.

The ranking is the comparison view's (:mod:`snapaudit.report.comparison`): the per-question
D_i of the primary kernel (the semantic kernel with its judge's labels, else the exact
kernel) and the contribution D_i / n in pp, which sum to D. Listed are the questions whose
contribution is positive (their answers moved more across old -> new than within a state),
largest first, ties by question id, at most :data:`LIMIT`; each with its question and its
old and new answers: the distinct answers in repeat order with their counts, whitespace
collapsed, anything unprintable shown as ``?`` (answers are untrusted text) and cut to
:data:`WIDTH` characters.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from snapaudit.stats.analysis import AnalysisResult
from snapaudit.stats.churn import per_question
from snapaudit.stats.kernels import AnswerGrid, ExactKernel, Kernel, SemanticKernel
from snapaudit.stats.normalize import normalizer
from snapaudit.tables import AnswerRow, PairLabel, read_answers, read_labels

LIMIT = 5
WIDTH = 60
SHOWN = 3  # distinct answers shown per state


@dataclass(frozen=True)
class TopChange:
    """One question that moved: its contribution to D (pp) and its old and new answers as
    (answer, count) in order of first repeat."""

    question_id: str
    question: str | None
    contribution_pp: float
    old: tuple[tuple[str, int], ...]
    new: tuple[tuple[str, int], ...]


def top_changes(result: AnalysisResult, answers: Sequence[AnswerRow],
                labels: Sequence[PairLabel] = (), limit: int = LIMIT
                ) -> tuple[str, list[TopChange], int]:
    """(the kernel ranked by, the questions with the largest positive contributions, how
    many questions have a positive contribution)."""
    comp = result.comparison
    grid = AnswerGrid.from_rows(answers)
    kernel = _kernel(result, grid, labels)
    known = result.per_question.get(kernel.name)
    d = known.d if known is not None and len(known.d) == grid.n else per_question(
        grid, kernel, comp.old, comp.new).d
    order = sorted((i for i in np.flatnonzero(d > 0).tolist()),
                   key=lambda i: (-float(d[i]), grid.question_ids[i]))[:limit]
    questions = {r.question_id: r.question for r in answers if r.question}
    out = []
    for i in order:
        qid = grid.question_ids[i]
        out.append(TopChange(qid, questions.get(qid), 100 * float(d[i]) / grid.n,
                             _groups(grid, qid, comp.old), _groups(grid, qid, comp.new)))
    return kernel.name, out, int(np.count_nonzero(d > 0))


def _kernel(result: AnalysisResult, grid: AnswerGrid, labels: Sequence[PairLabel]) -> Kernel:
    semantic = result.kernels.get("semantic")
    if semantic is not None and semantic.judge and labels:
        return SemanticKernel(labels, str(semantic.judge))
    return ExactKernel(grid, normalizer(result.comparison.benchmark))


def _groups(grid: AnswerGrid, qid: str, state: str) -> tuple[tuple[str, int], ...]:
    counts: dict[str, int] = {}
    for ref in grid.refs(state):
        text = grid.answer(qid, ref)
        counts[text] = counts.get(text, 0) + 1
    return tuple(counts.items())


def shorten(text: str, width: int = WIDTH) -> str:
    """One printable line of at most ``width`` characters."""
    line = "".join(c if c.isprintable() else "?" for c in " ".join(text.split()))
    return line if len(line) <= width else line[:width - 3] + "..."


def _answers(groups: Sequence[tuple[str, int]]) -> str:
    shown = [f'"{shorten(text)}"' + (f" x{count}" if count > 1 else "")
             for text, count in groups[:SHOWN]]
    more = f" (+{len(groups) - SHOWN} more)" if len(groups) > SHOWN else ""
    return " | ".join(shown) + more


def change_lines(result: AnalysisResult, answers: Sequence[AnswerRow],
                 labels: Sequence[PairLabel] = (), limit: int = LIMIT) -> list[str]:
    """The summary's lines naming the questions that changed most (see the module doc)."""
    comp = result.comparison
    kernel, changes, moved = top_changes(result, answers, labels, limit)
    if not changes:
        return [f"No question's answers moved more across {comp.old} -> {comp.new} than "
                f"within a state ({kernel} kernel)."]
    lines = [f"Largest contributions to D ({kernel} kernel, pp): {len(changes)} of the "
             f"{moved} question(s) whose answers moved more across {comp.old} -> {comp.new} "
             "than within a state:"]
    width = max(len(c.question_id) for c in changes)
    for c in changes:
        question = f"  {shorten(c.question, 2 * WIDTH)}" if c.question else ""
        lines += [f"  {c.question_id:<{width}}  {c.contribution_pp:+.2f}{question}",
                  f"    old {comp.old}: {_answers(c.old)}",
                  f"    new {comp.new}: {_answers(c.new)}"]
    return lines


def run_change_lines(run_dir: str | Path, result: AnalysisResult,
                     limit: int = LIMIT) -> list[str]:
    """:func:`change_lines` of a finished run directory (its answer and label tables)."""
    from snapaudit.run.record.rundir import RunDir  # not for `analyze` (imports no pydantic)

    rd = RunDir(run_dir, read_only=True)
    if not rd.table("answers").exists():
        return []
    answers = read_answers(rd.table("answers"))
    labels = list(read_labels(rd.table("labels"))) if rd.table("labels").exists() else []
    return change_lines(result, answers, labels, limit)
