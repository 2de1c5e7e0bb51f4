"""Cross-judge audit: two judges' labels on the same pairs.

Over the pairs both judges labelled: raw agreement (percent), Cohen's kappa
(po - pe) / (1 - pe) with pe = pA pB + (1 - pA)(1 - pB), pX the share of 'same' labels of
judge X, and the share of questions whose partitions match exactly (the judges agree on every
common pair of the question). Intervals: question-cluster bootstrap (the stream of
:func:`snapaudit.stats.bootstrap.whole_question_bootstrap` over per-question pair counts), each
statistic computed from the resampled totals.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from snapaudit.errors import InputError
from snapaudit.stats.bootstrap import BootstrapDraws, summarize, whole_question_bootstrap
from snapaudit.stats.churn import PerQuestion, per_question
from snapaudit.stats.kernels import AnswerGrid, SemanticKernel, pair_matrix
from snapaudit.tables import LabelTable, PairLabel
from snapaudit.tables.labeltable import DENSE_MAX


@dataclass(frozen=True)
class JudgeAgreement:
    judges: tuple[str, str]
    pairs: int
    questions: int
    agreement: float
    agreement_ci95: tuple[float, float]
    kappa: float | None
    kappa_ci95: tuple[float, float] | None
    partitions_identical: float
    partitions_identical_ci95: tuple[float, float]
    d_hat: Mapping[str, float | None]

    def to_json(self) -> dict[str, object]:
        return {"judges": list(self.judges), "pairs": self.pairs, "questions": self.questions,
                "agreement": self.agreement, "agreement_ci95": list(self.agreement_ci95),
                "kappa": self.kappa,
                "kappa_ci95": list(self.kappa_ci95) if self.kappa_ci95 else None,
                "partitions_identical": self.partitions_identical,
                "partitions_identical_ci95": list(self.partitions_identical_ci95),
                "d_hat": dict(self.d_hat)}


def judges_of(labels: Sequence[PairLabel]) -> tuple[str, ...]:
    if isinstance(labels, LabelTable):  # the judges with a row
        if len(labels.judges) <= 4:  # a comparison pass each beats bincount's int64 copy
            return tuple(sorted(j for i, j in enumerate(labels.judges)
                                if bool(np.any(labels.judge == i))))
        used = np.bincount(labels.judge, minlength=len(labels.judges)) > 0
        return tuple(sorted(labels.judges[i] for i in np.flatnonzero(used).tolist()))
    return tuple(sorted({lab.judge for lab in labels}))


def per_question_counts(labels: Sequence[PairLabel], a: str, b: str) -> np.ndarray:
    """Rows (pairs, agree, same_a, same_b, identical) per question with common pairs,
    in sorted question id order."""
    t = LabelTable.from_labels(labels)
    nr = max(1, len(t.refs))
    size = len(t.questions)
    cols = _dense_counts(t, a, b)
    if cols is None:
        keys = _pair_keys(t)
        va, vb = _last_by_key(t, keys, a), _last_by_key(t, keys, b)
        common, ia, ib = np.intersect1d(va[0], vb[0], assume_unique=True,
                                        return_indices=True)
        sa, sb = va[1][ia].astype(np.int64), vb[1][ib].astype(np.int64)
        q = common // (nr * nr)
        cols = [np.bincount(q, weights=w, minlength=size)
                for w in (np.ones(len(q)), (sa == sb).astype(np.float64), sa, sb)]
    if not cols[0].any():
        return np.zeros((0, 5))
    order = sorted(range(size), key=t.questions.__getitem__)  # sorted question id order
    out = np.column_stack([*cols, (cols[0] == cols[1]).astype(np.float64)])[order]
    kept: np.ndarray = out[out[:, 0] > 0]
    return kept


def _pair_keys(t: LabelTable) -> np.ndarray:
    """(question, unordered pair) of every row, as one int64."""
    nr = max(1, len(t.refs))
    lo, hi = np.minimum(t.a, t.b), np.maximum(t.a, t.b)
    keys: np.ndarray = (t.q.astype(np.int64) * nr + lo) * nr + hi
    return keys


def _last_by_key(t: LabelTable, keys: np.ndarray, judge: str) -> tuple[np.ndarray, np.ndarray]:
    """The judge's distinct pair keys (sorted) and its decision (the last label wins)."""
    rows = np.flatnonzero(t.for_judge(judge))[::-1]
    uniq, first = np.unique(keys[rows], return_index=True)
    return uniq, t.same[rows[first]]


def _dense_counts(t: LabelTable, a: str, b: str) -> list[np.ndarray] | None:
    """Per question of the table (its order): the common pairs, the pairs both judges decide
    alike, and each judge's 'same' among them (float64 counts, as the weighted ``bincount``
    of the sorted path gives them), from tables over the (question, pair) key space, when
    each judge labels a pair once and the space is small; None otherwise."""
    nq, nr = max(1, len(t.questions)), max(1, len(t.refs))
    space = nq * nr * nr
    if space > max(DENSE_MAX, 2 * len(t)):
        return None
    tables = []
    for judge in (a, b):
        mask = t.for_judge(judge)
        lo, hi = np.minimum(t.a[mask], t.b[mask]), np.maximum(t.a[mask], t.b[mask])
        keys = (t.q[mask].astype(np.int64) * nr + lo) * nr + hi
        seen = np.zeros(space, dtype=np.bool_)
        seen[keys] = True
        if int(np.count_nonzero(seen)) != keys.size:
            return None  # a judge labelled a pair twice: the last label wins, by sorting
        same = np.zeros(space, dtype=np.bool_)
        same[keys] = t.same[mask]
        tables.append((seen.reshape(nq, nr * nr), same.reshape(nq, nr * nr)))
    (seen_a, same_a), (seen_b, same_b) = tables
    both = seen_a & seen_b
    counted = (both, both & (same_a == same_b), both & same_a, both & same_b)
    return [np.count_nonzero(x, axis=1).astype(np.float64)[:len(t.questions)]
            for x in counted]


def kappa_from_totals(t: np.ndarray) -> np.ndarray:
    """Cohen's kappa from column totals (..., 5); nan where pe == 1."""
    po, pa, pb = t[..., 1] / t[..., 0], t[..., 2] / t[..., 0], t[..., 3] / t[..., 0]
    pe = pa * pb + (1 - pa) * (1 - pb)
    with np.errstate(divide="ignore", invalid="ignore"):
        k: np.ndarray = np.where(pe < 1, (po - pe) / (1 - pe), np.nan)
    return k


def agreement(labels: Sequence[PairLabel], a: str, b: str, d_hat: Mapping[str, float | None],
              draws: int, seed: int, counts: np.ndarray | None = None,
              boot: BootstrapDraws | None = None) -> JudgeAgreement | None:
    """``counts``: :func:`per_question_counts` and ``boot`` their bootstrap, if known."""
    if counts is None:
        counts = per_question_counts(labels, a, b)
    if counts.shape[0] == 0:
        return None
    if boot is None:
        boot = whole_question_bootstrap(counts, draws, seed)
    agree = 100 * boot.draws[:, 1] / boot.draws[:, 0]
    kap = kappa_from_totals(boot.draws)
    point_kappa = float(kappa_from_totals(boot.point))
    kap_ok = kap[np.isfinite(kap)]
    ident = 100 * boot.draws[:, 4]
    return JudgeAgreement(
        (a, b), int(counts[:, 0].sum()), counts.shape[0],
        100 * float(boot.point[1] / boot.point[0]), summarize(0, agree).ci95,
        point_kappa if np.isfinite(point_kappa) else None,
        summarize(0, kap_ok).ci95 if kap_ok.size else None,
        100 * float(boot.point[4]), summarize(0, ident).ci95, d_hat)


def judge_pair(judges: Sequence[str], primary: str) -> tuple[str, str] | None:
    """(primary judge, the first other judge), or None with fewer than two judges."""
    other = next((j for j in judges if j != primary), None)
    return None if other is None else (primary, other)


def cross_judge(grid: AnswerGrid, labels: Sequence[PairLabel], pair: tuple[str, str],
                old: str, new: str, draws: int, seed: int, primary: PerQuestion, *,
                counts: np.ndarray | None = None,
                boot: BootstrapDraws | None = None) -> JudgeAgreement | None:
    """The two judges' agreement and each judge's D (pp), also on the questions both labelled
    completely; ``primary``: the first judge's per-question values (its kernel's, already
    computed without error), ``counts``/``boot`` as for :func:`agreement`."""
    d_hat = judge_d_hats(grid, labels, pair, old, new, primary)
    return agreement(labels, *pair, d_hat, draws, seed, counts, boot)


def judge_d_hats(grid: AnswerGrid, labels: Sequence[PairLabel], pair: tuple[str, str],
                 old: str, new: str, primary: PerQuestion) -> dict[str, float | None]:
    """Each judge's D (pp), and on the questions both labelled completely when those are
    fewer than all (None: the second judge's labels miss a pair somewhere)."""
    first, second = pair
    d_hat: dict[str, float | None] = {first: 100 * primary.d_hat}
    kernel = SemanticKernel(labels, second)
    try:
        d_hat[second] = 100 * per_question(grid, kernel, old, new).d_hat
    except InputError:
        d_hat[second] = None
    # the first judge's labels are complete: its per-question values raised nothing
    complete: np.ndarray = np.asarray((pair_matrix(kernel, grid, (old, new)) >= 0).all(axis=(1, 2)))
    common = [q for q, ok in zip(grid.question_ids, complete.tolist(), strict=True) if ok]
    if common and len(common) < grid.n:
        sub = grid.subset(common)
        for judge in pair:
            d = per_question(sub, SemanticKernel(labels, judge), old, new).d_hat
            d_hat[f"{judge}@common"] = 100 * d
    return d_hat
