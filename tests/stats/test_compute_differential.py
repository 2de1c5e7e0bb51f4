"""The vectorized rewrites of the analysis give what the formulas they replaced give.

Each test keeps the replaced code as a reference, written out here, and compares on random
inputs built to reach every branch (duplicates, gaps, unsorted ids, both pair orders).
"""

from __future__ import annotations

import numpy as np
import pytest

from snapaudit.stats.agreement import per_question_counts
from snapaudit.stats.consistency import identical_consistency, identical_on_grid
from snapaudit.stats.kernels import AnswerGrid, ExactKernel, SemanticKernel, pair_matrix
from snapaudit.stats.normalize import normalize_nq
from snapaudit.stats.overlap import has_doc_ids, overlap, shared_ids
from snapaudit.tables import AnswerRef, AnswerRow, LabelTable, PairLabel


def _reference_counts(t: LabelTable, a: str, b: str) -> np.ndarray:
    """per_question_counts before the count tables: sorted keys, intersect1d, bincount."""
    nr = max(1, len(t.refs))
    lo, hi = np.minimum(t.a, t.b), np.maximum(t.a, t.b)
    keys = (t.q.astype(np.int64) * nr + lo) * nr + hi

    def last(judge: str) -> tuple[np.ndarray, np.ndarray]:
        rows = np.flatnonzero(t.for_judge(judge))[::-1]
        uniq, first = np.unique(keys[rows], return_index=True)
        return uniq, t.same[rows[first]]

    (ka, xa), (kb, xb) = last(a), last(b)
    common, ia, ib = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
    sa, sb = xa[ia].astype(np.int64), xb[ib].astype(np.int64)
    if common.size == 0:
        return np.zeros((0, 5))
    q = common // (nr * nr)
    rank = np.empty(len(t.questions), dtype=np.int64)
    rank[sorted(range(len(t.questions)), key=t.questions.__getitem__)] = np.arange(
        len(t.questions))
    size = len(t.questions)
    cols = [np.bincount(rank[q], weights=w, minlength=size)
            for w in (np.ones(len(q)), (sa == sb).astype(np.float64), sa, sb)]
    out = np.column_stack([*cols, (cols[0] == cols[1]).astype(np.float64)])
    kept: np.ndarray = out[out[:, 0] > 0]
    return kept


def _random_table(rng: np.random.Generator, *, duplicates: bool, judges: int = 3
                  ) -> LabelTable:
    nq, r = int(rng.integers(1, 30)), int(rng.integers(2, 5))
    refs = [AnswerRef(s, j) for s in ("n0", "n1") for j in range(1, r + 1)]
    questions = [f"q{int(x):03d}" for x in rng.permutation(1000)[:nq]]  # not sorted
    q, a, b, same, judge = [], [], [], [], []
    for j in range(judges):
        for qi in range(nq):
            for x in range(len(refs)):
                for y in range(x + 1, len(refs)):
                    if rng.random() < 0.2:
                        continue  # a gap: this judge did not label the pair
                    lo, hi = (x, y) if rng.random() < 0.5 else (y, x)
                    copies = 2 if duplicates and rng.random() < 0.1 else 1
                    for _ in range(copies):
                        q.append(qi)
                        a.append(lo)
                        b.append(hi)
                        same.append(bool(rng.random() < 0.6))
                        judge.append(j)
    order = rng.permutation(len(q))  # file order is any order
    cols = [np.asarray(c)[order] for c in (q, a, b, same, judge)]
    return LabelTable(questions, refs, [f"j{j}" for j in range(judges)], *cols)


@pytest.mark.parametrize("duplicates", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_agreement_counts_equal_the_sorted_formula(seed: int, duplicates: bool) -> None:
    t = _random_table(np.random.default_rng(seed), duplicates=duplicates)
    for a, b in (("j0", "j1"), ("j2", "j0"), ("j1", "nobody")):
        got, want = per_question_counts(t, a, b), _reference_counts(t, a, b)
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes()
    if not duplicates:
        assert per_question_counts(t, "j0", "j1").shape[0] > 0  # the test compares rows


def _matrices(rng: np.random.Generator) -> list[np.ndarray]:
    n = int(rng.integers(1, 400))
    m = int(rng.integers(1, 6))
    grid = rng.integers(0, 4, size=(n, m)) / int(rng.integers(1, 6))  # few distinct rows
    ints = rng.integers(-3, 40, size=(n, m)).astype(np.float64)
    floats = rng.normal(size=(n, m))
    odd = grid.copy()
    odd[rng.integers(0, n), 0] = -0.0  # numpy.unique's own order decides these
    nan = floats.copy()
    nan[rng.integers(0, n), rng.integers(0, m)] = np.nan
    return [grid, ints, floats, odd, nan, -grid]


@pytest.mark.parametrize("seed", range(20))
def test_distinct_rows_equal_numpy_unique(seed: int) -> None:
    from snapaudit.stats.bootstrap import distinct_rows

    for v in _matrices(np.random.default_rng(seed)):
        uniq, inverse = distinct_rows(v)
        want, want_inverse = np.unique(v, axis=0, return_inverse=True)
        assert uniq.tobytes() == want.tobytes() and uniq.shape == want.shape
        assert inverse.tolist() == want_inverse.ravel().tolist()
        assert inverse.shape == (v.shape[0],)


def _random_grid_rows(rng: np.random.Generator, *, none: bool) -> list[AnswerRow]:
    nq, r = int(rng.integers(1, 25)), int(rng.integers(2, 4))
    qids = [f"q{int(x):03d}" for x in rng.permutation(500)[:nq]]  # first appearance unsorted
    states = ["n1", "n0", "n2"]
    out = []
    for q in qids:
        kind = int(rng.integers(0, 4))
        base = tuple(f"d{int(x)}" for x in rng.integers(0, 6, size=int(rng.integers(0, 5))))
        for s in states:
            for j in range(1, r + 1):
                docs: tuple[str, ...] | None
                if kind == 0:
                    docs = base  # the same list in every state
                elif kind == 1:
                    docs = tuple(f"d{int(x)}" for x in rng.integers(0, 6, size=3))  # may repeat
                elif kind == 2:
                    docs = base[::-1]  # the same set, another order
                else:
                    docs = None if none and rng.random() < 0.3 else ()
                out.append(AnswerRow(q, s, j, f"a{int(rng.integers(0, 3))}", docs))
    order = rng.permutation(len(out))
    return [out[i] for i in order]


def _reference_overlap(grid: AnswerGrid, old: str, new: str, flip_ids: list[str]
                       ) -> tuple[object, ...]:
    """overlap()'s per-question loop before the columns: a dict lookup and two sets each."""
    docs = {(q, s): grid.doc_ids[(q, s)] for q in grid.question_ids for s in (old, new)}
    shared, frac, identical, k_max = [], [], 0, 0
    for q in grid.question_ids:
        a, b = docs[(q, old)][0] or (), docs[(q, new)][0] or ()
        s, k = shared_ids(a, b)
        shared.append(s)
        frac.append(s / k if k else 1.0)
        identical += set(a) == set(b)
        k_max = max(k_max, k)
    is_flip = [q in set(flip_ids) for q in grid.question_ids]
    flips = [f for f, x in zip(frac, is_flip, strict=True) if x]
    rest = [f for f, x in zip(frac, is_flip, strict=True) if not x]
    return (k_max, sum(frac) / grid.n, 100 * sum(f == 0 for f in frac) / grid.n, identical,
            sum(flips) / len(flips) if flips else None,
            sum(rest) / len(rest) if rest else None, sum(shared) / grid.n)


@pytest.mark.parametrize("seed", range(15))
def test_grid_cells_and_overlap_equal_the_dict_formulas(seed: int) -> None:
    rng = np.random.default_rng(seed)
    answers = _random_grid_rows(rng, none=seed % 3 == 0)
    grid = AnswerGrid.from_rows(answers)
    qs = list(dict.fromkeys(x.question_id for x in answers))  # first appearance
    ss = list(dict.fromkeys(x.state for x in answers))
    by_cell: dict[tuple[str, str], list[AnswerRow]] = {(q, s): [] for q in qs for s in ss}
    for row in sorted(answers, key=lambda x: x.repeat):
        by_cell[(row.question_id, row.state)].append(row)
    want = {k: tuple(x.answer for x in v) for k, v in by_cell.items()}
    assert dict(grid.answers) == want and grid.answers == want and len(grid.answers) == len(want)
    assert list(grid.answers) == list(want)  # first appearance order of questions, states
    assert dict(grid.doc_ids) == {k: tuple(x.doc_ids for x in v) for k, v in by_cell.items()}
    assert ("nope", "n0") not in grid.answers and grid.doc_ids.get(("q", "x"), 7) == 7
    assert grid.answers.get("not a key") is None  # type: ignore[call-overload]
    key_rows = {key: i for i, key in enumerate(want)}
    assert grid.cell_rows(["n0", "n2"]).tolist() == [
        [key_rows[(q, "n0")], key_rows[(q, "n2")]] for q in grid.question_ids]
    if all(grid.doc_ids[(q, s)][0] is not None for q in grid.question_ids for s in ("n0", "n1")):
        assert has_doc_ids(grid, "n0", "n1")
        flip_ids = [q for q in grid.question_ids if rng.random() < 0.4]
        got = overlap(grid, "n0", "n1", flip_ids)
        assert (got.k, got.mean, got.zero_rate, got.identical, got.flips_mean, got.rest_mean,
                got.mean_docs) == _reference_overlap(grid, "n0", "n1", flip_ids)
    else:
        assert not has_doc_ids(grid, "n0", "n1")


def test_overlap_reaches_both_branches() -> None:
    rows = [AnswerRow("q1", s, j, "x", ("a", "b", "a")) for s in ("o", "n") for j in (1, 2)]
    rows += [AnswerRow("q2", "o", j, "x", ("a", "b")) for j in (1, 2)]
    rows += [AnswerRow("q2", "n", j, "x", ("b", "a", "c")) for j in (1, 2)]
    got = overlap(AnswerGrid.from_rows(rows), "o", "n", ["q2"])
    # q1: the same list, 2 distinct ids shared of k = 3; q2: 2 shared of k = 3, sets differ
    assert (got.identical, got.histogram, got.mean) == (1, {2: 2}, 2 / 3)


def _reference_matrix(kernel: SemanticKernel, grid: AnswerGrid, refs: list[AnswerRef]
                      ) -> np.ndarray:
    """SemanticKernel._matrix before flat indices: the 3-index assignments, filtered."""
    t, m = kernel.table, len(refs)
    out = np.full((grid.n, m, m), -1, dtype=np.int8)
    pos = {ref: i for i, ref in enumerate(refs)}
    qrow = np.array([grid.index.get(q, -1) for q in t.questions], dtype=np.int64)
    rpos = np.array([pos.get(ref, -1) for ref in t.refs], dtype=np.int64)
    rows = kernel.judge_rows
    qi, pa, pb = qrow[t.q[rows]], rpos[t.a[rows]], rpos[t.b[rows]]
    ok = (qi >= 0) & (pa >= 0) & (pb >= 0)
    value = t.same[rows][ok].astype(np.int8)
    out[qi[ok], pa[ok], pb[ok]] = value
    out[qi[ok], pb[ok], pa[ok]] = value
    diag = np.arange(m)
    out[:, diag, diag] = 1
    return out


@pytest.mark.parametrize("seed", range(12))
def test_semantic_matrix_and_consistency_equal_the_reference(seed: int) -> None:
    rng = np.random.default_rng(seed)
    t = _random_table(rng, duplicates=True, judges=2)
    r = len(t.refs) // 2
    answers = [AnswerRow(q, s, j, f"a{int(rng.integers(0, 2))}") for q in t.questions
               for s in ("n0", "n1") for j in range(1, r + 1)]
    grid = AnswerGrid.from_rows(answers)
    for judge in ("j0", "j1"):
        kernel = SemanticKernel(t, judge)
        for states in (("n0", "n1"), ("n1",)):
            refs = [ref for s in states for ref in grid.refs(s)]
            got = kernel.matrix(grid, refs)
            assert got.tobytes() == _reference_matrix(kernel, grid, refs).tobytes()
        sub = grid.subset(list(grid.question_ids[::2]))  # questions of the table not in it
        refs = grid.refs("n0")
        assert kernel.matrix(sub, refs).tobytes() == _reference_matrix(kernel, sub, refs
                                                                       ).tobytes()
        got_c = identical_on_grid(grid, ExactKernel(grid, normalize_nq), kernel)
        want_c = identical_consistency(answers, list(t), judge, normalize_nq)
        assert got_c == want_c


@pytest.mark.parametrize("seed", range(10))
def test_running_sum_is_the_python_loop(seed: int) -> None:
    from snapaudit.stats.metrics import _running_sum

    rng = np.random.default_rng(seed)
    cases = [rng.random(5000) * 10.0 ** rng.integers(-8, 8, size=5000),
             np.array([-0.0, -0.0]), np.array([-0.0, 1e-300, -1e-300]), np.zeros(0),
             np.array([1e16, 1.0, -1e16, 1.0])]
    for values in cases:
        loop = 0.0
        for v in values.tolist():
            loop += v
        got = _running_sum(values)
        assert np.float64(got).tobytes() == np.float64(loop).tobytes()


def test_check_gold_names_the_questions_without_aliases() -> None:
    from snapaudit.errors import InputError
    from snapaudit.stats.metrics import check_gold

    grid = AnswerGrid.from_rows([AnswerRow(q, s, j, "x") for q in ("q1", "q2", "q3")
                                 for s in ("o", "n") for j in (1, 2)])
    check_gold(grid, {"q1": ["a"], "q2": ("b",), "q3": ["c"]})
    with pytest.raises(InputError, match=r"2 question\(s\): q1, q3"):
        check_gold(grid, {"q1": [], "q2": ["b"]})


@pytest.mark.parametrize("judges", [1, 3, 6])
def test_judges_of_lists_the_judges_with_a_label(judges: int) -> None:
    from snapaudit.stats.agreement import judges_of

    t = _random_table(np.random.default_rng(judges), duplicates=False, judges=judges)
    names = [*(f"j{j}" for j in reversed(range(judges))), "silent"]  # one judge without a row
    table = LabelTable(t.questions, t.refs, names, t.q, t.a, t.b, t.same,
                       judges - 1 - t.judge)
    want = tuple(sorted({lab.judge for lab in table}))
    assert judges_of(table) == want == judges_of(list(table))
    assert "silent" not in want and len(want) == judges


@pytest.mark.parametrize("seed", range(8))
def test_nontransitive_counts_equal_the_triple_loop(seed: int) -> None:
    from itertools import combinations

    from snapaudit.stats.kernels import nontransitive_counts

    rng = np.random.default_rng(seed)
    r, n = int(rng.integers(1, 7)), int(rng.integers(0, 40))
    answers = [AnswerRow(f"q{i}", s, j, f"a{int(rng.integers(0, 3))}") for i in range(max(n, 1))
               for s in ("n0", "n1") for j in range(1, max(r, 2) + 1)]
    grid = AnswerGrid.from_rows(answers)
    m = 2 * r
    k = (rng.random((grid.n, m, m)) < 0.5).astype(np.int8)
    k = np.triu(k, 1) + np.triu(k, 1).transpose(0, 2, 1) + np.eye(m, dtype=np.int8)
    for kernel, states in ((_Fixed(k), ("n0", "n1")), (ExactKernel(grid, normalize_nq),
                                                      ("n0", "n1")),
                           (ExactKernel(grid, normalize_nq), ("n1",))):
        kk = pair_matrix(kernel, grid, states).astype(np.int16)
        want = np.zeros(grid.n, dtype=np.int64)
        for x, y, z in combinations(range(kk.shape[1]), 3):
            want += (kk[:, x, y] + kk[:, y, z] + kk[:, x, z]) == 2
        got = nontransitive_counts(kernel, grid, states)
        assert got.dtype == want.dtype and got.tolist() == want.tolist()
    assert m < 3 or int(nontransitive_counts(_Fixed(k), grid, ("n0", "n1")).sum()) > 0


def test_nontransitive_counts_still_raise_the_missing_label() -> None:
    from snapaudit.errors import InputError
    from snapaudit.stats.kernels import nontransitive_counts

    answers = [AnswerRow("q1", s, j, "x") for s in ("n0", "n1") for j in (1, 2)]
    labels = [PairLabel("q1", AnswerRef("n0", 1), AnswerRef("n0", 2), True)]
    grid = AnswerGrid.from_rows(answers)
    with pytest.raises(InputError, match="missing pair label"):
        nontransitive_counts(SemanticKernel(labels, "default"), grid, ("n0", "n1"))


class _Fixed:
    """A kernel with a given matrix (no gaps)."""

    name = "fixed"

    def __init__(self, k: np.ndarray) -> None:
        self._k = k

    def same(self, qid: str, a: AnswerRef, b: AnswerRef) -> bool:
        raise AssertionError("the matrix has no gaps")

    def matrix(self, grid: AnswerGrid, refs: list[AnswerRef]) -> np.ndarray:
        return self._k
