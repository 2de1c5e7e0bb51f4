"""The matched-repeat 2x2 table against gold: repeat j of the old state vs repeat j of the new.

Each of the n x r comparisons is match->match (MM), match->nonmatch (MN), nonmatch->match (NM)
or nonmatch->nonmatch (NN) by EM. :func:`matched_table` counts them per question; the flip
rates (:mod:`snapaudit.stats.fliprates`) and the transitions
(:mod:`snapaudit.stats.transitions`) are both read from it.
"""

from __future__ import annotations

import numpy as np

CELLS = ("match_to_match", "match_to_nonmatch", "nonmatch_to_match", "nonmatch_to_nonmatch")


def matched_table(em_old: np.ndarray, em_new: np.ndarray) -> np.ndarray:
    """(n, 4) int64 counts per question over its r matched repeats: MM, MN, NM, NN.

    ``em_old`` / ``em_new``: (n, r) EM of each repeat, bool or 0/1 floats (> 0.5 is a match).
    """
    a, b = np.asarray(em_old) > 0.5, np.asarray(em_new) > 0.5
    return np.column_stack([np.count_nonzero(a & b, axis=1), np.count_nonzero(a & ~b, axis=1),
                            np.count_nonzero(~a & b, axis=1),
                            np.count_nonzero(~a & ~b, axis=1)]).astype(np.int64)
