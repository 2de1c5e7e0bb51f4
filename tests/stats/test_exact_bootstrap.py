"""The exact bootstrap against independent computations: exact rational arithmetic over every
multinomial resample (small n), plain sequential convolution, and many Monte Carlo draws."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from snapaudit.stats.bootstrap import whole_question_bootstrap
from snapaudit.stats.exact import (
    exact_intervals,
    grid_denominator,
    mean_distribution,
    on_grid,
)


def _compositions(n: int, parts: int) -> itertools.chain[tuple[int, ...]]:
    """Every (c_1..c_parts) of non-negative integers summing to n."""
    return itertools.chain.from_iterable(
        [tuple(b - a - 1 for a, b in zip((-1, *bars), (*bars, n + parts - 1), strict=True))]
        for bars in itertools.combinations(range(n + parts - 1), parts - 1))


def _rational_distribution(values: list[Fraction]) -> dict[Fraction, Fraction]:
    """P(resampled mean = v), exactly: every multinomial resample of the n questions."""
    n = len(values)
    out: dict[Fraction, Fraction] = {}
    for counts in _compositions(n, n):
        weight = Fraction(math.factorial(n), math.prod(math.factorial(c) for c in counts))
        mean = sum((c * v for c, v in zip(counts, values, strict=True)), Fraction(0)) / n
        out[mean] = out.get(mean, Fraction(0)) + weight / n ** n
    return out


def _rational_summary(dist: dict[Fraction, Fraction]) -> tuple[Fraction, ...]:
    def quantile(level: Fraction) -> Fraction:
        total = Fraction(0)
        for v in sorted(dist):
            total += dist[v]
            if total >= level:
                return v
        raise AssertionError("unreachable")

    p0 = sum((p for v, p in dist.items() if v <= 0), Fraction(0))
    return (quantile(Fraction(5, 100)), quantile(Fraction(25, 1000)),
            quantile(Fraction(975, 1000)), p0)


def _random_grid_values(rng: np.random.Generator, n: int, r: int) -> list[Fraction]:
    """Per-question D-like values: within pairs minus cross pairs, on the grid of r."""
    within = Fraction(1, r * (r - 1)) if r > 1 else Fraction(0)
    cross = Fraction(1, r * r)
    out = []
    for _ in range(n):
        a = int(rng.integers(0, r * (r - 1) + 1))
        b = int(rng.integers(0, r * r + 1))
        out.append(a * within - b * cross)
    return out


@pytest.mark.parametrize(("r", "n", "seed"), [(2, 6, 0), (2, 7, 1), (3, 6, 2), (3, 7, 3),
                                              (4, 6, 4), (4, 7, 5), (2, 5, 6)])
def test_exact_equals_rational_enumeration(r: int, n: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    values = _random_grid_values(rng, n, r)
    lcb, lo, hi, p0 = _rational_summary(_rational_distribution(values))
    floats = np.array([float(v) for v in values])
    iv = exact_intervals(floats, r, lambda: pytest.fail("no draws expected")).summary(0)
    assert iv.method == "exact"
    assert abs(iv.point - float(sum(values) / n)) < 1e-12
    assert abs(iv.lcb95 - float(lcb)) < 1e-9
    assert abs(iv.ci95[0] - float(lo)) < 1e-9 and abs(iv.ci95[1] - float(hi)) < 1e-9
    assert abs(iv.p_nonpositive - float(p0)) < 1e-9


def test_whole_pmf_equals_rational_enumeration() -> None:
    values = [Fraction(k, 6) for k in (-3, 0, 0, 2, 5, 1)]  # r = 3 (L = 18) and r = 4 (48)
    exact = _rational_distribution(values)
    for r in (3, 4):
        denom = grid_denominator(r)
        k = on_grid(np.array([float(v) for v in values]), denom)
        assert k is not None
        dist = mean_distribution(k, denom)
        for j, p in enumerate(dist.pmf):
            v = Fraction(int(dist.offset + j), 6 * denom)
            assert abs(float(p) - float(exact.get(v, Fraction(0)))) < 1e-12


def test_grid_detection() -> None:
    assert [grid_denominator(r) for r in (1, 2, 3, 4, 5)] == [1, 4, 18, 48, 100]
    assert on_grid(np.array([0.25, -0.5, 1.0 / 3.0]), 4) is None
    assert on_grid(np.array([1.0 / 3.0 + 1e-12, -1.0 / 6.0]), 18) is not None
    assert on_grid(np.array([np.nan]), 4) is None
    called: list[int] = []
    draws = whole_question_bootstrap(np.array([0.1, 0.3, 0.7]), 500, 0)

    def draw() -> object:
        called.append(1)
        return draws

    iv = exact_intervals(np.array([0.1, 0.3, 0.7]), 2, draw).summary(0)  # type: ignore[arg-type]
    assert iv.method == "draws" and called == [1]


def test_fft_path_equals_sequential_convolution() -> None:
    rng = np.random.default_rng(7)
    r, n = 4, 900
    denom = grid_denominator(r)
    k = rng.integers(-denom // 2, denom // 2 + 1, size=n)
    dist = mean_distribution(k, denom)
    lo = int(k.min())
    one = np.bincount(k - lo).astype(np.float64) / n
    ref = np.array([1.0])
    for _ in range(n):
        ref = np.convolve(ref, one)
    ref_lo = n * lo
    shift = dist.offset - ref_lo
    assert shift >= 0
    assert np.max(np.abs(ref[shift:shift + dist.pmf.size] - dist.pmf)) < 1e-12
    assert ref[:shift].sum() + ref[shift + dist.pmf.size:].sum() < 1e-15


@pytest.mark.parametrize("r", [2, 3, 5])
def test_exact_agrees_with_many_draws(r: int) -> None:
    rng = np.random.default_rng(r)
    n = 400
    values = np.array([float(v) for v in _random_grid_values(rng, n, r)])
    iv = exact_intervals(values, r, lambda: pytest.fail("no draws expected")).summary(0, 100.0)
    mc = whole_question_bootstrap(values, 200_000, 1).summary(0, 100.0)
    se = 100 * values.std() / math.sqrt(n)
    step = 100 / (n * grid_denominator(r))
    for a, b in ((iv.lcb95, mc.lcb95), (iv.ci95[0], mc.ci95[0]), (iv.ci95[1], mc.ci95[1])):
        assert abs(a - b) < 0.02 * se + 2 * step
    assert abs(iv.p_nonpositive - mc.p_nonpositive) < 5 * math.sqrt(0.25 / 200_000) + 1e-3


def test_protocol_method_default_keeps_the_hash_and_draws_changes_it() -> None:
    from snapaudit.run.record.protocol import BootstrapConfig

    assert BootstrapConfig().model_dump(mode="json") == {"draws": 50_000, "seed": 0,
                                                         "permutations": 10_000}
    assert BootstrapConfig(method="exact") == BootstrapConfig()
    assert BootstrapConfig(method="draws").model_dump(mode="json")["method"] == "draws"


def test_analyze_names_the_method_and_draws_stays_an_option() -> None:
    from pathlib import Path

    from snapaudit.stats.analysis import AnalysisConfig, analyze
    from snapaudit.tables import read_answers, read_gold, read_labels

    examples = Path(__file__).resolve().parents[2] / "examples"
    answers = read_answers(examples / "answers.jsonl")
    labels = read_labels(examples / "labels.jsonl", answers)
    gold = read_gold(examples / "gold.jsonl")
    docs = {m: analyze(answers, labels=labels, gold=gold,
                       config=AnalysisConfig(old="n1", new="n7", ladder=("n0", "n1", "n3", "n7"),
                                             draws=20_000, permutations=0, bootstrap=m)
                       ).to_json() for m in ("exact", "draws")}
    ex, dr = docs["exact"], docs["draws"]
    assert ex["comparison"]["bootstrap"] == "exact"  # type: ignore[index]
    for name in ("exact", "semantic"):
        k_ex, k_dr = ex["kernels"][name], dr["kernels"][name]  # type: ignore[index]
        assert (k_ex["method"], k_dr["method"]) == ("exact", "draws")
        assert k_ex["d_hat"] == k_dr["d_hat"]
        assert abs(k_ex["lcb95"] - k_dr["lcb95"]) < 0.5
    em, f1 = ex["utility"]["delta"]["em"], ex["utility"]["delta"]["f1"]  # type: ignore[index]
    assert (em["method"], f1["method"]) == ("exact", "draws")
    assert f1["ci95"] == dr["utility"]["delta"]["f1"]["ci95"]  # type: ignore[index]
    assert {t["method"] for t in ex["multiplicity"]["tests"]} == {"exact"}  # type: ignore[index]


def test_cli_bootstrap_option(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from snapaudit.cli.analyze import command

    examples = Path(__file__).resolve().parents[2] / "examples"
    base = ["--answers", str(examples / "answers.jsonl"), "--old", "n1", "--new", "n7",
            "--draws", "2000", "--permutations", "0"]
    docs = {}
    for method in ("exact", "draws"):
        out = tmp_path / f"{method}.json"
        result = CliRunner().invoke(command, [*base, "--bootstrap", method, "--json", str(out)])
        assert result.exit_code == 0, result.output
        docs[method] = json.loads(out.read_text(encoding="utf-8"))
    assert docs["exact"]["kernels"]["exact"]["method"] == "exact"
    assert docs["draws"]["kernels"]["exact"]["method"] == "draws"
    assert docs["draws"]["comparison"]["bootstrap"] == "draws"
    bad = CliRunner().invoke(command, [*base, "--bootstrap", "bayes"])
    assert bad.exit_code == 2 and "bayes" in bad.output
