"""Which questions changed: the one rule the comparison view and the change review share.

A question is *listed* when its normalized answers differ between any two of its answers in
any state, when it is a strict flip (:func:`snapaudit.stats.flips.flip_ids`), or when its
D_i is not 0. The report's comparison view shows the listed questions (at most its row cap,
largest contribution first); the change review (:mod:`snapaudit.run.after.review`) asks for a
decision on every one of them.
"""

from __future__ import annotations

from collections.abc import Iterable

from snapaudit.stats.churn import per_question
from snapaudit.stats.flips import flip_ids
from snapaudit.stats.kernels import AnswerGrid, Kernel
from snapaudit.stats.normalize import Normalizer


def is_listed(texts: Iterable[str], normalize: Normalizer, flipped: bool, d_i: float) -> bool:
    """The rule for one question: ``texts`` are all its answers (every state and repeat)."""
    return len({normalize(t) for t in texts}) > 1 or flipped or d_i != 0.0


def listed_questions(grid: AnswerGrid, kernel: Kernel, old: str, new: str,
                     normalize: Normalizer) -> list[tuple[str, float]]:
    """The listed questions of ``grid`` under ``kernel`` with their D_i, in the grid's
    question order."""
    d = per_question(grid, kernel, old, new).d.tolist()
    flipped = set(flip_ids(kernel, grid, old, new))
    out = []
    for i, qid in enumerate(grid.question_ids):
        texts = [grid.answer(qid, ref) for s in grid.states for ref in grid.refs(s)]
        if is_listed(texts, normalize, qid in flipped, float(d[i])):
            out.append((qid, float(d[i])))
    return out
