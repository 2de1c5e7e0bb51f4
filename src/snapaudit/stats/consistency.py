"""How often a judge labels normalization-identical answers "same".

Identical normalized answers are always sent to the judge (never short-circuited) so
that this can be checked: a judge that calls two identical answers different is
unreliable, and the report states the share.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from snapaudit.stats.kernels import AnswerGrid, ExactKernel, SemanticKernel
from snapaudit.stats.normalize import Normalizer
from snapaudit.tables import AnswerRef, AnswerRow, PairLabel


@dataclass(frozen=True, slots=True)
class IdenticalConsistency:
    judge: str
    identical_pairs: int
    labelled_same: int

    @property
    def share_same(self) -> float | None:
        return self.labelled_same / self.identical_pairs if self.identical_pairs else None

    def to_json(self) -> dict[str, object]:
        return {"judge": self.judge, "identical_pairs": self.identical_pairs,
                "labelled_same": self.labelled_same, "share_same": self.share_same}


def identical_consistency(answers: Sequence[AnswerRow], labels: Sequence[PairLabel],
                          judge: str, normalize: Normalizer) -> IdenticalConsistency:
    """Among ``judge``'s labelled pairs whose normalized answers are equal, how many are same."""
    norm: dict[tuple[str, AnswerRef], str] = {
        (r.question_id, AnswerRef(r.state, r.repeat)): normalize(r.answer) for r in answers}
    pairs = same = 0
    for lab in labels:
        if lab.judge != judge:
            continue
        a, b = norm.get((lab.question_id, lab.a)), norm.get((lab.question_id, lab.b))
        if a is not None and a == b:
            pairs += 1
            same += lab.same
    return IdenticalConsistency(judge, pairs, same)


def identical_on_grid(grid: AnswerGrid, exact: ExactKernel,
                      semantic: SemanticKernel) -> IdenticalConsistency:
    """:func:`identical_consistency` on columns: the semantic kernel's labels whose answers
    the exact kernel calls equal (equal codes, equal normalized strings)."""
    t, rows = semantic.table, semantic.judge_rows
    refs = [ref for s in grid.states for ref in grid.refs(s)]
    codes = exact.codes(grid, refs)
    # int32 indices and codes where they fit: half the memory of the per-label temporaries
    index = np.dtype(np.int32 if codes.size < 2 ** 31 else np.int64)
    slot = {ref: i for i, ref in enumerate(refs)}
    rslot = np.array([slot.get(ref, -1) for ref in t.refs], dtype=index)
    qrow = grid.rows_of(t.questions).astype(index)  # -1: not in the grid
    # each side's slot of a label's ref pair code a x len(refs) + b (the kernel's, built once)
    slot_a, slot_b = np.repeat(rslot, len(t.refs)), np.tile(rslot, len(t.refs))
    pairs = semantic.pair_codes()
    qi, sa, sb = qrow[t.q[rows]], slot_a[pairs], slot_b[pairs]
    same = t.same[rows]
    known = (qi >= 0) & (sa >= 0) & (sb >= 0)
    if not known.all():
        qi, sa, sb, same = qi[known], sa[known], sb[known], same[known]
    narrow = codes.size == 0 or int(codes.max()) < 2 ** 31
    flat = codes.reshape(-1).astype(np.int32 if narrow else np.int64)
    base = qi * codes.shape[1]  # codes[qi, sa], on flat indices
    identical = flat[base + sa] == flat[base + sb]
    return IdenticalConsistency(semantic.judge, int(np.count_nonzero(identical)),
                                int(np.count_nonzero(identical & same)))
