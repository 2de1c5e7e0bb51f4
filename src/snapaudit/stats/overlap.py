"""Retrieval overlap between the states' first repeats, and whether flips track it.

For each question: shared = |set(ids_old) & set(ids_new)| of the first repeat's ordered
doc ids, k = the longer list's length, overlap = shared / k (1 when both lists are empty).
Reported: mean overlap (a fraction in [0, 1]) and the mean of ``shared`` (documents in common,
out of k: the study's unit, "1.19 of 8 documents"), zero-overlap rate (percent), identical-set
count, histogram of ``shared``, mean overlap of flips vs the rest, and per histogram bin a
two-sided Fisher exact test of flip vs rest x in bin vs not.

When the answers carry content hashes beside their doc ids (``doc_hashes``), a document kept
under the same id whose hash differs between old and new is *changed*: ``changed`` counts the
questions with one (of those whose first repeats carry hashes in both states), ``changed_docs``
is the mean number of such documents per question. Overlap itself stays a matter of ids.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from snapaudit.stats.kernels import AnswerGrid
from snapaudit.tables.answertable import CellMap


@dataclass(frozen=True, slots=True)
class FisherBin:
    shared: int
    flips_in_bin: int
    rest_in_bin: int
    odds_ratio: float | None
    p_value: float

    def to_json(self) -> dict[str, object]:
        return {"shared": self.shared, "flips_in_bin": self.flips_in_bin,
                "rest_in_bin": self.rest_in_bin, "odds_ratio": self.odds_ratio,
                "p_value": self.p_value}


@dataclass(frozen=True)
class Overlap:
    k: int
    questions: int
    mean: float
    zero_rate: float
    identical: int
    histogram: Mapping[int, int]
    flips_mean: float | None
    rest_mean: float | None
    fisher: tuple[FisherBin, ...]
    mean_docs: float = 0.0   # mean of ``shared``: documents in common, out of k
    # questions keeping a document id whose content hash changed, and the mean number of such
    # documents per question (None: no question has content hashes in both states)
    changed: int | None = None
    changed_docs: float | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {
            "k": self.k, "questions": self.questions, "mean": self.mean,
            "mean_docs": self.mean_docs,
            "zero_rate": self.zero_rate, "identical": self.identical,
            "histogram": {str(s): c for s, c in sorted(self.histogram.items())},
            "flips_mean": self.flips_mean, "rest_mean": self.rest_mean,
            "fisher": [f.to_json() for f in self.fisher]}
        if self.changed is not None:  # written only where content hashes were recorded
            out.update(changed=self.changed, changed_docs=self.changed_docs)
        return out


def has_doc_ids(grid: AnswerGrid, old: str, new: str) -> bool:
    """Whether every question carries doc ids for the first repeat of both states."""
    return all(None not in first_doc_ids(grid, s) for s in (old, new))


def first_doc_ids(grid: AnswerGrid, state: str) -> list[tuple[str, ...] | None]:
    """The first repeat's doc ids of ``state`` for every question, in grid order."""
    docs = grid.doc_ids
    if isinstance(docs, CellMap):  # one column of the flat cells
        column: list[tuple[str, ...] | None] = docs.column(grid.question_ids, state, 1)
        return column
    return [docs[(q, state)][0] for q in grid.question_ids]


def first_doc_hashes(grid: AnswerGrid, state: str) -> list[tuple[str, ...] | None]:
    """The first repeat's content hashes of ``state`` for every question (None: not known)."""
    hashes = grid.doc_hashes
    if hashes is None:
        return [None] * grid.n
    if isinstance(hashes, CellMap):
        column: list[tuple[str, ...] | None] = hashes.column(grid.question_ids, state, 1)
        return column
    return [hashes[(q, state)][0] for q in grid.question_ids]


def shared_ids(a: Sequence[str], b: Sequence[str]) -> tuple[int, int]:
    return len(set(a) & set(b)), max(len(a), len(b))


def changed_ids(ids_a: Sequence[str], hashes_a: Sequence[str] | None, ids_b: Sequence[str],
                hashes_b: Sequence[str] | None) -> list[str] | None:
    """The ids of ``ids_a`` (in its order) kept in ``ids_b`` whose content hash differs;
    None when either side has no hashes, one per id (nothing can be told)."""
    if hashes_a is None or hashes_b is None or len(hashes_a) != len(ids_a) \
            or len(hashes_b) != len(ids_b):
        return None
    new = dict(zip(ids_b, hashes_b, strict=True))
    return [d for d, h in zip(ids_a, hashes_a, strict=True) if d in new and new[d] != h]


def overlap(grid: AnswerGrid, old: str, new: str, flip_ids: Sequence[str]) -> Overlap:
    flipped = set(flip_ids)
    shared: list[int] = []
    frac: list[float] = []
    identical = 0
    k_max = 0
    for a, b in zip(first_doc_ids(grid, old), first_doc_ids(grid, new), strict=True):
        a, b = a or (), b or ()
        if a == b:  # the same list: every distinct id is shared, the sets are equal
            s, k, same = len(set(a)), len(a), True
        else:
            set_a, set_b = set(a), set(b)
            s, k = len(set_a & set_b), max(len(a), len(b))  # as shared_ids(a, b)
            same = set_a == set_b
        identical += same
        shared.append(s)
        frac.append(s / k if k else 1.0)
        k_max = max(k_max, k)
    hist: dict[int, int] = {}
    for s in shared:
        hist[s] = hist.get(s, 0) + 1
    is_flip = [q in flipped for q in grid.question_ids]
    changed, changed_docs = _changed(grid, old, new)
    return Overlap(k_max, grid.n, sum(frac) / grid.n, 100 * sum(f == 0 for f in frac) / grid.n,
                   identical, hist, _mean([f for f, x in zip(frac, is_flip, strict=True) if x]),
                   _mean([f for f, x in zip(frac, is_flip, strict=True) if not x]),
                   _fisher(shared, is_flip, sorted(hist)), sum(shared) / grid.n,
                   changed, changed_docs)


def _changed(grid: AnswerGrid, old: str, new: str) -> tuple[int | None, float | None]:
    """(questions with a changed document, mean changed documents per question) over the
    questions whose first repeats carry content hashes in both states."""
    if grid.doc_hashes is None:
        return None, None
    counts = [changed_ids(a or (), ha, b or (), hb) for a, ha, b, hb in zip(
        first_doc_ids(grid, old), first_doc_hashes(grid, old), first_doc_ids(grid, new),
        first_doc_hashes(grid, new), strict=True)]
    known = [len(c) for c in counts if c is not None]
    if not known:
        return None, None
    return sum(n > 0 for n in known), sum(known) / len(known)


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _fisher(shared: Sequence[int], is_flip: Sequence[bool], bins: Sequence[int]
            ) -> tuple[FisherBin, ...]:
    n_flips = sum(is_flip)
    n_rest = len(is_flip) - n_flips
    count = Counter(zip(shared, is_flip, strict=True))  # (bin, flipped) -> questions
    out = []
    for b in bins:
        f_in, r_in = count[(b, True)], count[(b, False)]
        odds, p = fisher_exact(f_in, n_flips - f_in, r_in, n_rest - r_in)
        out.append(FisherBin(b, f_in, r_in, odds, p))
    return tuple(out)


def fisher_exact(a: int, b: int, c: int, d: int) -> tuple[float | None, float]:
    """Two-sided Fisher exact test of [[a, b], [c, d]] (as scipy.stats.fisher_exact): the
    sample odds ratio ad/bc (None when infinite or undefined) and the sum of the hypergeometric
    probabilities of the tables no more likely than the observed one (relative tolerance 1e-7).

    The probabilities are computed relative to the mode, by the ratio of neighbours
    P(x+1)/P(x) = (r1 - x)(c1 - x) / ((x + 1)(n - r1 - c1 + x + 1)) multiplied outwards, and
    normalized by their sum (as R's fisher.test): no big integers, and the p-values of the
    exact binomial expressions to about 1e-13 relative (tests/stats/test_overlap_fisher.py).
    Written out here because importing scipy.stats costs about a second."""
    row1, col1, total = a + b, a + c, a + b + c + d
    lo, hi = max(0, col1 - (total - row1)), min(row1, col1)
    x = np.arange(lo, hi, dtype=np.int64)
    up = ((row1 - x) * (col1 - x)).astype(np.float64)  # P(x + 1) / P(x) = up / down
    down = ((x + 1) * (total - row1 - col1 + x + 1)).astype(np.float64)
    mode = int(np.count_nonzero(up >= down))  # the ratios fall: P rises up to the mode
    weights = np.empty(hi - lo + 1)
    weights[mode] = 1.0
    weights[mode + 1:] = np.cumprod(up[mode:] / down[mode:])
    weights[:mode] = np.cumprod(down[:mode][::-1] / up[:mode][::-1])[::-1]
    observed = weights[a - lo]
    p = float(weights[weights <= observed * (1 + 1e-7)].sum() / weights.sum())
    return (a * d / (b * c) if b * c else None), min(1.0, p)
