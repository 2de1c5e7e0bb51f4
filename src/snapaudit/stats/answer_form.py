"""How long the answers are, and so which kernel says something about them.

The exact kernel compares whole normalized strings: for short answers (a name, a date) two
answers that differ name different things, but two sentences giving the same fact in other
words differ too, so for sentence answers the exact kernel counts every rewording as a change
(and EM, which needs the answer to equal a gold alias, stays near zero). NQ-open keeps only
questions whose gold answers have at most five tokens; an answer of more words than that is
treated as a sentence (:data:`SENTENCE_WORDS`).

:func:`median_words` is the median number of words (``str.split``) over every answer of the
compared states, each distinct answer counted once per cell it fills; :func:`kernel_to_read`
names the kernel the summaries point to.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from snapaudit.stats.kernels import AnswerGrid

SENTENCE_WORDS = 5  # NQ-open's longest gold answer, in tokens


def median_words(grid: AnswerGrid, states: Sequence[str]) -> float:
    """The median word count of every answer of ``states`` (all questions and repeats)."""
    values, codes = grid.distinct
    used = codes[grid.cell_rows(states)].ravel()
    distinct, inverse = np.unique(used, return_inverse=True)
    words = np.array([len(values[i].split()) for i in distinct.tolist()], dtype=np.int64)
    return float(np.median(words[inverse]))


def is_sentences(words: float | None) -> bool:
    """Whether answers with this median word count are sentences (None: not known)."""
    return words is not None and words > SENTENCE_WORDS


def kernel_to_read(kernels: Collection[str], words: float | None) -> tuple[str | None, str]:
    """(the kernel to read, why) for answers of median ``words``; ``None`` when the run has
    no kernel that fits (sentences without a judge). Short answers: ``""`` reason, both
    kernels mean what they say."""
    if not is_sentences(words):
        return ("semantic" if "semantic" in kernels else "exact"), ""
    why = (f"answers are sentences (median {words:g} words): the exact kernel counts every "
           "rewording as a change")
    if "semantic" in kernels:
        return "semantic", why
    return None, why
