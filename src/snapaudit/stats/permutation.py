"""A permutation test of equal answer distributions, stratified by question.

H0: for every question, the old and new states draw answers from the same distribution.
Statistic (after Gao, Liang and Guestrin, ICLR 2025, "Model Equality Testing"): the mean over
questions of the unbiased squared MMD between the two states' r answers, with the kernel's
0/1 similarity; for a question, MMD^2_u = 2 D_i (the repeat-noise-corrected churn of the
audit), so the statistic is 2 D / 100. Under H0 the 2r answers of a question are exchangeable,
so the null distribution permutes which r of them are called "old", independently per question.

Vectorized: a question's D under a relabelling depends only on its 2r x 2r same/different
matrix, so questions are grouped by that matrix (the upper triangle's bits; ``numpy.unique``
order). For each pattern, D is computed for every split of the 2r answers into two groups of
r (C(2r, r) = M splits, the first being the observed one). Patterns with the same multiset of
split values share one null distribution (a relabelling of the positions permutes the
splits), so they are pooled: a group of n_g questions whose null takes the distinct values
u_1..u_L with probabilities p_1..p_L adds Multinomial(n_g, p) counts dotted with u to a draw.
Groups whose D is the same for every split (e.g. all answers the same) are constants. For the
exact kernel there are at most as many groups as integer partitions of 2r, so a draw costs
O(groups x L) whatever n (10^5 questions, 10^4 permutations: about 1 s at r = 2, 7 s at
r = 6). For r > 7 (M > 3432) the splits are a seeded sample of 2,000 uniformly random splits
shared by every pattern (an approximation; patterns then rarely pool, and a run at 10^5
questions takes minutes).

The stream: ``rng = numpy.random.Generator(numpy.random.PCG64([seed, 16]))`` (which first
draws the sampled splits when r > 7); then for each non-constant group in order,
``rng.multinomial(n_g, p, size=B)`` (in row blocks, which never changes the draws).
p-value: (1 + #{draws >= observed}) / (1 + B), on exact integer sums (ties count).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations
from math import comb
from typing import Any

import numpy as np

from snapaudit.stats.codec import decode
from snapaudit.stats.kernels import AnswerGrid, Kernel, pair_matrix

MAX_SPLITS = 3432         # C(14, 7): enumerate every split up to r = 7
SAMPLED_SPLITS = 2000
STREAM = 16
BLOCK_ELEMENTS = 4_000_000
TIE = 1e-6           # on the integer scale of split_weights: sums are exact integers


@dataclass(frozen=True, slots=True)
class PermutationResult:
    mmd2: float           # mean over questions of the unbiased MMD^2 (= 2 D as a fraction)
    p_value: float
    patterns: int = 0     # distinct patterns tested (not written to the results)

    def to_json(self) -> dict[str, object]:
        return {"mmd2": self.mmd2, "p_value": self.p_value}


def same_matrices(kernel: Kernel, grid: AnswerGrid, old: str, new: str) -> np.ndarray:
    """(n, P) bits of the upper triangle (row-major, a < b) of every question's same/different
    matrix over its answers [old 1..r, new 1..r]."""
    k = pair_matrix(kernel, grid, (old, new))
    a, b = np.triu_indices(k.shape[1], k=1)  # row-major a < b, as combinations() orders them
    values = k[:, a, b]
    incomplete = np.flatnonzero((values < 0).any(axis=1))
    if len(incomplete):  # the scalar walk raises the missing-label error naming the pair
        refs, q = [*grid.refs(old), *grid.refs(new)], grid.question_ids[int(incomplete[0])]
        for x, y in zip(a.tolist(), b.tolist(), strict=True):
            kernel.same(q, refs[x], refs[y])
    bits: np.ndarray = values == 1
    return bits


def codes_to_bits(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """The same bits from (n, r) integer answer codes (equality kernel)."""
    x = np.concatenate([old, new], axis=1)
    a, b = np.triu_indices(x.shape[1], k=1)
    bits: np.ndarray = x[:, a] == x[:, b]
    return bits


def _splits(size: int, r: int, rng: np.random.Generator) -> np.ndarray:
    """(M, r) positions called "old", the observed split (0..r-1) first."""
    if comb(size, r) <= MAX_SPLITS:
        return np.array(list(combinations(range(size), r)), dtype=np.int64)
    sampled = np.sort(rng.permuted(np.tile(np.arange(size), (SAMPLED_SPLITS - 1, 1)),
                                   axis=1)[:, :r], axis=1)
    return np.vstack([np.arange(r)[None, :], sampled])


def split_weights(r: int, splits: np.ndarray) -> tuple[np.ndarray, int]:
    """(P, M) integer weights W and a scale with D(pattern, split) = (bits @ W) / scale.

    D = (s_A + s_B) / (2 q) - c / r^2 (q = r(r-1)/2 within pairs per group, s the same-pairs
    within each group, c the same cross pairs), times scale = 2 q r^2: integers, so the
    values (and every permutation sum) are exact in float64.
    """
    size, q = 2 * r, r * (r - 1) // 2
    a, b = np.triu_indices(size, k=1)
    old = np.zeros((splits.shape[0], size), dtype=bool)
    old[np.arange(splits.shape[0])[:, None], splits] = True
    same_side = old[:, a] == old[:, b]                    # (M, P): within A or within B
    weights = np.where(same_side, r * r, -2 * q).T.astype(np.float64)
    return weights, 2 * q * r * r


def split_values(patterns: np.ndarray, r: int, splits: np.ndarray) -> np.ndarray:
    """(K, M) D of every pattern under every split (fractions)."""
    weights, scale = split_weights(r, splits)
    values: np.ndarray = (patterns.astype(np.float64) @ weights) / scale
    return values


def null_groups(patterns: np.ndarray, counts: np.ndarray, weights: np.ndarray
                ) -> tuple[float, float, list[tuple[int, np.ndarray, np.ndarray]]]:
    """The observed sum, the constant part, and the questions grouped by null distribution:
    (questions, distinct scaled D values, their probabilities) per varying group, in
    ``numpy.unique`` order of the sorted split values (all scaled by ``split_weights``).

    Two patterns whose D values over the splits are the same multiset have the same null
    distribution (relabelling the 2r positions permutes the splits), so they draw together.
    Patterns are processed in blocks, so memory stays bounded for large r.
    """
    observed = constant = 0.0
    pooled: dict[bytes, tuple[np.ndarray, float]] = {}
    step = max(1, BLOCK_ELEMENTS // weights.shape[1])
    for start in range(0, patterns.shape[0], step):
        values = patterns[start:start + step].astype(np.float64) @ weights
        n_k = counts[start:start + step].astype(np.float64)
        observed += float(n_k @ values[:, 0])
        ordered = np.sort(values, axis=1)
        flat = ordered[:, 0] == ordered[:, -1]
        constant += float(n_k[flat] @ values[flat, 0])
        for row, size in zip(ordered[~flat], n_k[~flat], strict=True):
            key = row.tobytes()
            pooled[key] = (row, pooled[key][1] + size if key in pooled else size)
    if not pooled:
        return observed, constant, []
    keys = np.array([v[0] for v in pooled.values()])
    sizes = [v[1] for v in pooled.values()]
    order = np.lexsort(keys.T[::-1])
    out = []
    for i in order:
        distinct, freq = np.unique(keys[i], return_counts=True)
        out.append((int(sizes[i]), distinct, freq / keys.shape[1]))
    return observed, constant, out


def distinct_patterns(bits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.unique(bits, axis=0, return_counts=True)`` of (n, P) bools: rows of at most 63
    bits are packed into one integer each (first column most significant, so integer order is
    the rows' lexicographic order) and counted as integers; wider rows go to ``numpy.unique``."""
    n, width = bits.shape
    if width > 63 or n == 0:
        patterns, counts = np.unique(bits, axis=0, return_counts=True)
        return patterns, counts
    weights = np.left_shift(np.int64(1), np.arange(width - 1, -1, -1, dtype=np.int64))
    keys = bits.astype(np.int64) @ weights
    uniq, counts = np.unique(keys, return_counts=True)
    patterns = ((uniq[:, None] & weights) != 0).astype(bits.dtype)
    return patterns, counts


def permutation_test(bits: np.ndarray, r: int, permutations: int, seed: int
                     ) -> PermutationResult:
    """Stratified permutation test from the (n, P) same bits of n questions with r repeats."""
    n = bits.shape[0]
    rng = np.random.Generator(np.random.PCG64([seed, STREAM]))
    patterns, counts = distinct_patterns(bits)
    weights, scale = split_weights(r, _splits(2 * r, r, rng))
    observed, constant, groups = null_groups(patterns, counts, weights)
    total = np.full(permutations, constant)
    for size, distinct, probs in groups:
        step = max(1, BLOCK_ELEMENTS // distinct.size)
        for start in range(0, permutations, step):
            block = min(step, permutations - start)
            total[start:start + block] += rng.multinomial(size, probs, size=block) @ distinct
    hits = int(np.sum(total >= observed - TIE))
    return PermutationResult(2 * observed / scale / n, (1 + hits) / (1 + permutations),
                             int(patterns.shape[0]))


@dataclass(frozen=True)
class DistributionTest:
    permutations: int
    seed: int
    kernels: dict[str, PermutationResult]

    def to_json(self) -> dict[str, object]:
        return {"method": "stratified_permutation_mmd2", "permutations": self.permutations,
                "seed": self.seed, **{k: v.to_json() for k, v in self.kernels.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DistributionTest:
        kernels = {k: decode(PermutationResult, v) for k, v in data.items()
                   if k not in ("method", "permutations", "seed")}
        return decode(cls, data, kernels=kernels)


def distribution_test(kernels: dict[str, Kernel], grid: AnswerGrid, old: str, new: str,
                      permutations: int, seed: int,
                      done: Mapping[str, PermutationResult] | None = None) -> DistributionTest:
    """The test of every kernel; ``done``: results already computed (the same stream)."""
    known = done or {}
    return DistributionTest(permutations, seed, {
        name: known[name] if name in known else
        permutation_test(same_matrices(k, grid, old, new), grid.repeats, permutations, seed)
        for name, k in kernels.items()})

