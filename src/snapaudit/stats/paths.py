"""Random corpus paths: D per path and step, the path-averaged D and its two-stage interval.

With K corpus paths (``[testbed.paths]``), each step of the ladder (``n1 -> n3``) is measured
once per path j on the same questions: D_ij, question i, path j (per-question D of
:mod:`snapaudit.stats.churn` between path j's two states). Per step and kernel:

- ``per_path``: D_j = mean_i D_ij (pp), one per path;
- ``d_mean``: the path-averaged D = mean_ij D_ij, the content-averaged estimate of the step;
- ``ci95``, ``lcb95``: the two-stage (crossed) bootstrap: each draw resamples K paths with
  replacement and, independently, n questions with replacement, and takes the mean of D_ij
  over the drawn paths x questions (multinomial counts: ``counts_q @ D @ counts_p / (n K)``);
  percentile interval (2.5th, 97.5th) and the 5th percentile; seeded;
- ``sd_between`` (ddof 1) and ``range`` of the per-path D: the between-path spread;
- ``path_share``: the share of the step's D variance that path identity explains, the
  two-way ANOVA eta squared SS_path / SS_total of the n x K table D_ij (0 when D is constant);
- ``components``: the variance components of the crossed random-effects model
  D_ij = mu + a_j + b_i + e_ij by the ANOVA method (negative estimates set to 0), as standard
  deviations in pp: ``path_sd`` (a), ``question_sd`` (b), ``residual_sd`` (e); ``snapaudit
  plan`` sizes K and n from them (:mod:`snapaudit.stats.paths_plan`).

``bench/paths_calibration.py`` measures the interval's coverage by simulation
(docs/analysis.md). With one path, none of this is computed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

import numpy as np

from snapaudit.stats.churn import per_question
from snapaudit.stats.kernels import AnswerGrid, Kernel

METHOD = "two-stage percentile bootstrap: paths, then questions"


@dataclass(frozen=True, slots=True)
class PathStep:
    """One step (``n1->n3``) of every path, one kernel."""

    step: str
    states: tuple[tuple[str, str], ...]  # (old, new) state of each path
    per_path: tuple[float, ...]
    d_mean: float
    ci95: tuple[float, float]
    lcb95: float
    sd_between: float
    range: tuple[float, float]
    path_share: float
    components: Mapping[str, float]

    def to_json(self) -> dict[str, Any]:
        return {"step": self.step,
                "per_path": [{"path": j, "old": a, "new": b, "d_hat": d}
                             for j, ((a, b), d) in enumerate(zip(self.states, self.per_path,
                                                                  strict=True))],
                "d_mean": self.d_mean, "ci95": list(self.ci95), "lcb95": self.lcb95,
                "sd_between": self.sd_between, "range": list(self.range),
                "path_share": self.path_share, "components": dict(self.components)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PathStep:
        per = data["per_path"]
        return cls(str(data["step"]), tuple((str(p["old"]), str(p["new"])) for p in per),
                   tuple(p["d_hat"] for p in per), data["d_mean"], tuple(data["ci95"]),
                   data["lcb95"], data["sd_between"], tuple(data["range"]),
                   data["path_share"], dict(data["components"]))  # type: ignore[arg-type]


@dataclass(frozen=True)
class PathsResult:
    """Every step of the ladder and the endpoints (old -> new), per kernel."""

    count: int
    ladders: tuple[tuple[str, ...], ...]
    orders: tuple[tuple[int, ...], ...] | None
    draws: int
    seed: int
    kernels: Mapping[str, tuple[tuple[PathStep, ...], PathStep]]  # kernel -> (steps, endpoints)

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "ladders": [list(x) for x in self.ladders],
                "orders": [list(o) for o in self.orders] if self.orders is not None else None,
                "method": METHOD, "draws": self.draws, "seed": self.seed,
                "kernels": {k: {"steps": [s.to_json() for s in steps],
                                "endpoints": ends.to_json()}
                            for k, (steps, ends) in self.kernels.items()}}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> PathsResult:
        orders = data.get("orders")
        return cls(int(data["count"]), tuple(tuple(x) for x in data["ladders"]),
                   tuple(tuple(o) for o in orders) if orders is not None else None,
                   int(data["draws"]), int(data["seed"]),
                   {k: (tuple(PathStep.from_json(s) for s in part["steps"]),
                        PathStep.from_json(part["endpoints"]))
                    for k, part in data["kernels"].items()})


def two_stage_draws(d: np.ndarray, draws: int, seed: int) -> np.ndarray:
    """Means of ``d`` (questions x paths) over ``draws`` crossed resamples of paths and
    questions (multinomial counts; seeded)."""
    n, k = d.shape
    rng = np.random.default_rng(seed)
    out = np.empty(draws)
    chunk = max(1, min(draws, 4_000_000 // max(n, k)))
    for lo in range(0, draws, chunk):
        m = min(chunk, draws - lo)
        cq = rng.multinomial(n, np.full(n, 1.0 / n), size=m)
        cp = rng.multinomial(k, np.full(k, 1.0 / k), size=m)
        out[lo:lo + m] = ((cq @ d) * cp).sum(axis=1) / (n * k)
    return out


def components(d: np.ndarray) -> dict[str, float]:
    """ANOVA variance components of the crossed model (standard deviations, units of d)."""
    n, k = d.shape
    grand = d.mean()
    rows, cols = d.mean(axis=1), d.mean(axis=0)
    resid = d - rows[:, None] - cols[None, :] + grand
    ms_e = float((resid ** 2).sum() / ((n - 1) * (k - 1))) if n > 1 and k > 1 else 0.0
    ms_p = float(n * ((cols - grand) ** 2).sum() / (k - 1)) if k > 1 else 0.0
    ms_q = float(k * ((rows - grand) ** 2).sum() / (n - 1)) if n > 1 else 0.0
    return {"path_sd": max(0.0, (ms_p - ms_e) / n) ** 0.5,
            "question_sd": max(0.0, (ms_q - ms_e) / k) ** 0.5,
            "residual_sd": ms_e ** 0.5}


def path_step(step: str, states: Sequence[tuple[str, str]], d: np.ndarray, draws: int,
              seed: int) -> PathStep:
    """The summary of one step from its D_ij table (fractions; questions x paths)."""
    pp = 100.0 * d
    per_path = pp.mean(axis=0)
    boot = two_stage_draws(pp, draws, seed)
    total = float(((pp - pp.mean()) ** 2).sum())
    between = float(pp.shape[0] * ((per_path - pp.mean()) ** 2).sum())
    return PathStep(
        step=step, states=tuple((a, b) for a, b in states),
        per_path=tuple(float(x) for x in per_path), d_mean=float(pp.mean()),
        ci95=(float(np.percentile(boot, 2.5)), float(np.percentile(boot, 97.5))),
        lcb95=float(np.percentile(boot, 5.0)),
        sd_between=float(np.std(per_path, ddof=1)) if len(per_path) > 1 else 0.0,
        range=(float(per_path.min()), float(per_path.max())),
        path_share=between / total if total > 0 else 0.0,
        components=components(pp))


def paths_analysis(grid: AnswerGrid, kernels: Mapping[str, Kernel],
                   ladders: Sequence[Sequence[str]], old: str, new: str, *, draws: int,
                   seed: int, orders: Sequence[Sequence[int]] | None = None) -> PathsResult:
    """Every adjacent step of path 0's ladder, and old -> new, on every path (``ladders[j]``:
    path j's states, position by position as path 0's)."""
    base = list(ladders[0])
    i_old, i_new = base.index(old), base.index(new)
    out: dict[str, tuple[tuple[PathStep, ...], PathStep]] = {}
    for name, kernel in kernels.items():
        def table(a: int, b: int, kernel: Kernel = kernel) -> tuple[list[tuple[str, str]],
                                                                    np.ndarray]:
            pairs = [(lad[a], lad[b]) for lad in ladders]
            return pairs, np.column_stack([per_question(grid, kernel, x, y).d
                                           for x, y in pairs])

        steps = []
        for s, (a, b) in enumerate(pairwise(range(len(base)))):
            pairs, d = table(a, b)
            steps.append(path_step(f"{base[a]}->{base[b]}", pairs, d, draws, seed + 1 + s))
        pairs, d = table(i_old, i_new)
        out[name] = (tuple(steps), path_step(f"{old}->{new}", pairs, d, draws, seed))
    return PathsResult(len(ladders), tuple(tuple(x) for x in ladders),
                       tuple(tuple(o) for o in orders) if orders is not None else None,
                       draws, seed, out)
