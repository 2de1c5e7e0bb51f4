"""A sequential design planned from a pilot: the questions and answer calls it will use.

``snapaudit plan PILOT --looks K --margin M`` simulates audits of N planned questions at
true D = 0, M and 2M (pp, the same in every gate kernel) and at the pilot's own D_i as
observed (its D per kernel), and decides each with the code
``snapaudit analyze --looks K`` runs (:func:`snapaudit.stats.sequential.take_looks`: the
exact bootstrap's repeated bounds, the gate with its margin, the stop at the first decisive
look), and the same audits with the fixed design (one look at all N questions). Reported
per D and design: the share of audits that end INCOMPATIBLE and COMPATIBLE, and the mean
and 90th percentile of the questions used (answer calls: questions x the pilot's states x
repeats) and the share of the fixed design's calls not made.

**The simulated questions: the pilot's D_i, exponentially tilted to each D.** An audit
draws N rows (D_i of every gate kernel jointly, so the kernels keep the pilot's correlation)
from the pilot's distinct rows x_j with probabilities p_j proportional to f_j exp(theta .
x_j), f_j the row's share of the pilot and theta (one value per kernel) the root of
sum_j p_j x_j = (D, ..., D): of all distributions on the pilot's rows with that mean, the
closest to the pilot's in Kullback-Leibler divergence (the exponentially tilted bootstrap
that imposes a null: Efron 1981; Davison & Hinkley 1997, sec. 4.4). Why not:

- *shifting* every D_i by D minus the pilot's mean: the shifted values leave the grid of r
  (multiples of 1/4 at r = 2) and the range D_i can take ([-1/2, 1] at r = 2), and off the
  grid the exact bootstrap falls back to Monte Carlo draws, which cannot resolve the first
  looks' nominal levels (3e-8 at look 1 of 8): simulated early looks would not be the
  analysis's;
- the *normal approximation* with the pilot's SD: it misses the discreteness, the kernels'
  correlation, the rule ``exact d_hat >= 3`` and the bootstrap's tails, and it is not the
  analysis's code.

Tilting keeps every value one the pilot saw and moves its spread with D the way churn does
(the SD of D_i at each target is reported): a pilot at D = 0 tilted to D = 10 pp gains
variance, as the reference study's D_i did (SD about 0.2 at D = 0, 0.4 at D = 10 pp); a
pilot at D = 10 tilted to D = 0 keeps more spread than a run at D = 0 shows, which makes the
plan at D = 0 conservative. A D the pilot's rows cannot reach (outside their convex hull, e.g.
every pilot D_i equal) gets a note instead of numbers. Questions are resampled one by one: a
clustered pilot's design effect is not simulated (the plan says so).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.special import logsumexp

from snapaudit.errors import ConfigError
from snapaudit.progress import Progress, SilentProgress
from snapaudit.stats.cluster import Resampling
from snapaudit.stats.gate import GateConfig
from snapaudit.stats.plan import Pilot
from snapaudit.stats.sequential import LookData, check_design, take_looks
from snapaudit.stats.spending import nominal_levels

DEFAULT_SIMULATIONS = 200
MIN_SIMULATIONS = 20
_DRAWS = 2000  # only used where a column is off the grid (the exact bootstrap needs none)
_TOL = 1e-7  # a tilted mean this close to the target (fractions, 1e-5 pp) has reached it;
# trust-exact can stop at ~2e-9 when its model no longer predicts an improvement


@dataclass(frozen=True, slots=True)
class DesignOutcome:
    """One design at one D over the simulated audits: the share of audits ending
    INCOMPATIBLE and COMPATIBLE, and the questions used (mean, 90th percentile)."""

    incompatible: float
    compatible: float
    mean_questions: float
    p90_questions: int
    saved: float  # 1 - mean questions / planned: the expected share of calls not made

    def to_json(self) -> dict[str, float | int]:
        return {"incompatible": self.incompatible, "compatible": self.compatible,
                "mean_questions": self.mean_questions, "p90_questions": self.p90_questions,
                "calls_saved": self.saved}


@dataclass(frozen=True, slots=True)
class SequentialRow:
    """The sequential and the fixed design at one target D (None: the pilot's D_i as
    observed; the outcomes None and a note where the pilot's rows cannot reach it);
    ``d_pp`` / ``sd_pp``: the mean and SD of the simulated D_i per kernel."""

    target_d_pp: float | None
    d_pp: Mapping[str, float] | None
    sd_pp: Mapping[str, float] | None
    sequential: DesignOutcome | None
    fixed: DesignOutcome | None
    note: str | None = None

    def to_json(self) -> dict[str, object]:
        return {"target_d": self.target_d_pp,
                "d": dict(self.d_pp) if self.d_pp is not None else None,
                "sd": dict(self.sd_pp) if self.sd_pp is not None else None,
                "sequential": self.sequential.to_json() if self.sequential else None,
                "fixed": self.fixed.to_json() if self.fixed else None, "note": self.note}


@dataclass(frozen=True)
class SequentialPlan:
    """The design (K looks over N questions, the margin, each look's nominal level) and its
    simulated outcome at each target D."""

    looks: int
    planned: int
    margin_pp: float
    kernels: tuple[str, ...]
    rules: tuple[str, ...]
    nominal: tuple[float, ...]
    simulations: int
    seed: int
    calls_per_question: int | None
    rows: tuple[SequentialRow, ...]
    clustered: bool = False

    def to_json(self) -> dict[str, object]:
        return {"looks": self.looks, "questions_planned": self.planned,
                "margin_pp": self.margin_pp, "kernels": list(self.kernels),
                "rules": list(self.rules), "nominal": list(self.nominal),
                "simulations": self.simulations, "seed": self.seed,
                "calls_per_question": self.calls_per_question,
                "simulated": "the pilot's D_i, exponentially tilted to each D",
                "clustered_pilot": self.clustered, "rows": [r.to_json() for r in self.rows]}


def tilt(rows: np.ndarray, shares: np.ndarray, target: np.ndarray) -> np.ndarray | None:
    """Probabilities p_j proportional to ``shares`` x exp(theta . rows_j) whose mean is
    ``target`` (rows (J, m), one theta per column), or None when no such p exists (the
    target is not inside the rows' convex hull). theta minimizes the convex
    log sum_j f_j exp(theta . (x_j - target)) (Newton steps in a trust region, scipy)."""
    centred = rows - target
    if np.any(centred.min(axis=0) >= 0) or np.any(centred.max(axis=0) <= 0):
        return None  # not strictly inside the rows' range in some column
    logf = np.log(shares)

    def probs(theta: np.ndarray) -> np.ndarray:
        z = logf + centred @ theta
        out: np.ndarray = np.exp(z - logsumexp(z))
        return out

    def hess(theta: np.ndarray) -> np.ndarray:
        p = probs(theta)
        mean = p @ centred
        out: np.ndarray = (centred * p[:, None]).T @ centred - np.outer(mean, mean)
        return out

    found = minimize(lambda t: float(logsumexp(logf + centred @ t)), np.zeros(rows.shape[1]),
                     jac=lambda t: probs(t) @ centred, hess=hess, method="trust-exact",
                     options={"gtol": 1e-13, "maxiter": 200})
    p = probs(found.x)
    return p if np.all(np.abs(p @ centred) <= _TOL) else None


def sequential_plan(pilot: Pilot, gate: GateConfig, looks: int, planned: int,
                    simulations: int = DEFAULT_SIMULATIONS, seed: int = 0,
                    progress: Progress | None = None) -> SequentialPlan:
    """Simulate the K-look design and the fixed design at D = 0, M and 2M and at the pilot's
    D_i as observed (see the module doc); ``gate`` carries the margin M."""
    margin = gate.margin_pp
    if margin is None:
        raise ConfigError("the sequential plan needs a margin (the gate's margin_pp)")
    check_design(planned, looks)
    if simulations < MIN_SIMULATIONS:
        raise ConfigError(f"simulations must be at least {MIN_SIMULATIONS}, got {simulations}")
    kernels = tuple(sorted(gate.kernels()))
    values = _pilot_rows(pilot, kernels)
    rows, inverse = np.unique(values, axis=0, return_inverse=True)
    shares = np.bincount(inverse.ravel()) / values.shape[0]
    report = progress or SilentProgress()
    world = _World(rows, shares, kernels, pilot.repeats)
    out = [_row(world, target, gate, looks, planned, simulations, seed, report)
           for target in (0.0, margin, 2 * margin, None)]
    calls = pilot.states * pilot.repeats if pilot.states is not None else None
    return SequentialPlan(looks, planned, float(margin), kernels,
                          tuple(r.describe() for r in gate.active_rules()),
                          nominal_levels([k / looks for k in range(1, looks + 1)], 0.05),
                          simulations, seed, calls, tuple(out),
                          clustered=pilot.design_effect is not None)


@dataclass(frozen=True)
class _World:
    """The pilot's distinct rows of gate-kernel D_i (fractions), their shares, the kernels'
    names and the pilot's repeats."""

    rows: np.ndarray
    shares: np.ndarray
    kernels: tuple[str, ...]
    repeats: int


def _row(world: _World, target: float | None, gate: GateConfig, looks: int, planned: int,
         simulations: int, seed: int, report: Progress) -> SequentialRow:
    """Both designs at ``target`` pp (None: the pilot's D_i as observed)."""
    if target is None:
        p: np.ndarray | None = world.shares
        what, key = "the pilot's D_i as observed", [seed, 1, 0]
    else:
        p = tilt(world.rows, world.shares, np.full(len(world.kernels), target / 100))
        what, key = f"D = {target:g} pp", [seed, 0, round(1000 * target)]
    if p is None:
        return SequentialRow(target, None, None, None, None,
                             f"the pilot's D_i cannot reach {what} in every gate kernel (no "
                             "row above/below it)")
    report.stage(f"simulating audits at {what}", simulations)
    rng = np.random.Generator(np.random.PCG64(key))
    seq, fixed = _simulate(world.rows, p, world.kernels, world.repeats, gate, looks, planned,
                           simulations, rng, report)
    mean = p @ world.rows
    sd = np.sqrt(p @ (world.rows - mean) ** 2)
    return SequentialRow(target, _per_kernel(world.kernels, mean),
                         _per_kernel(world.kernels, sd), seq, fixed)


def _per_kernel(kernels: Sequence[str], fractions: np.ndarray) -> dict[str, float]:
    return {k: 100 * float(x) for k, x in zip(kernels, fractions, strict=True)}


def _pilot_rows(pilot: Pilot, kernels: Sequence[str]) -> np.ndarray:
    """The pilot's D_i (fractions) of the gate's kernels as columns."""
    have = pilot.values or {}
    missing = [k for k in kernels if k not in have]
    if missing:
        hint = " (no pair labels): plan the exact kernel alone with --exact-only" if (
            missing == ["semantic"]) else ""
        raise ConfigError(f"the gate needs the {', '.join(missing)} kernel but the pilot has "
                          f"no {', '.join(missing)} D_i{hint}")
    return np.column_stack([np.asarray(have[k], dtype=np.float64) for k in kernels])


def _simulate(rows: np.ndarray, p: np.ndarray, kernels: tuple[str, ...], repeats: int,
              gate: GateConfig, looks: int, planned: int, simulations: int,
              rng: np.random.Generator, progress: Progress
              ) -> tuple[DesignOutcome, DesignOutcome]:
    """Audits of ``planned`` questions drawn from ``rows`` with probabilities ``p``, each
    decided with K looks and with one."""
    used = np.empty(simulations, dtype=np.int64)
    seq_ends: list[str] = []
    fixed_ends: list[str] = []
    for s in range(simulations):
        values = rows[rng.choice(rows.shape[0], size=planned, p=p)]
        data = LookData(values, kernels, Resampling(), repeats, _DRAWS, s, "exact")
        seq = take_looks(data, gate, looks, planned)
        fixed = take_looks(data, gate, 1, planned) if looks > 1 else seq
        used[s] = seq.questions_used
        seq_ends.append(seq.looks[-1].decision)
        fixed_ends.append(fixed.looks[-1].decision)
        progress.advance()
    return (_outcome(seq_ends, used, planned),
            _outcome(fixed_ends, np.full(simulations, planned, dtype=np.int64), planned))


def _outcome(ends: Sequence[str], used: np.ndarray, planned: int) -> DesignOutcome:
    n = len(ends)
    return DesignOutcome(ends.count("incompatible") / n, ends.count("compatible") / n,
                         float(used.mean()),
                         int(np.quantile(used, 0.9, method="inverted_cdf")),
                         1.0 - float(used.mean()) / planned)


def render_sequential(plan: SequentialPlan) -> str:
    """The plain-text table ``snapaudit plan --looks K --margin M`` prints."""
    first = plan.planned // plan.looks
    se = 50.0 / np.sqrt(plan.simulations)
    lines = [f"sequential design: {plan.looks} look(s) over {plan.planned:,} questions "
             f"(first block {first:,}), margin {plan.margin_pp:g} pp; gate: "
             + ", ".join(plan.rules),
             "  stops at the first look where every rule holds (INCOMPATIBLE) or every gate "
             f"kernel's upper bound is below {plan.margin_pp:g} (COMPATIBLE); O'Brien-Fleming-"
             "type alpha spending, one-sided 0.05 per claim",
             "  nominal level of each look's bounds: "
             + ", ".join(f"{x:.2g}" for x in plan.nominal),
             f"  {plan.simulations:,} simulated audits per D (seed {plan.seed}): the pilot's "
             f"D_i exponentially tilted to each D (a share's Monte Carlo SE <= {se:.1f} "
             "points)",
             f"  saved: the mean share of the fixed design's answer calls ({plan.planned:,} "
             "questions) not made"]
    if plan.calls_per_question is not None:
        lines.append(f"  answer calls: {plan.calls_per_question} per question (the pilot's "
                     "states x repeats)")
    if plan.clustered:
        lines.append("  - the pilot is clustered: questions are resampled one by one, so "
                     "the design effect is not simulated (the looks will need more)")
    sd_head = "sd(D_i) " + " / ".join(plan.kernels)
    lines.append(f"  {'D (pp)':>6}  {sd_head:>24}  {'design':<10}  {'INCOMPATIBLE':>12}  "
                 f"{'COMPATIBLE':>10}  {'questions: mean':>15}  {'90th':>6}"
                 + (f"  {'calls: mean':>11}  {'90th':>8}" if plan.calls_per_question else "")
                 + f"  {'saved':>6}")
    for row in plan.rows:
        label = "pilot" if row.target_d_pp is None else f"{row.target_d_pp:g}"
        if row.sequential is None or row.fixed is None or row.sd_pp is None:
            lines.append(f"  {label:>6}  -  {row.note}")
            continue
        sd = " / ".join(f"{row.sd_pp[k]:.1f}" for k in plan.kernels)
        for name, out in (("sequential", row.sequential), ("fixed", row.fixed)):
            lead = f"{label:>6}  {sd:>24}" if name == "sequential" else " " * 32
            lines.append(f"  {lead}  {name:<10}  {100 * out.incompatible:>11.1f}%  "
                         f"{100 * out.compatible:>9.1f}%  {out.mean_questions:>15,.1f}  "
                         f"{out.p90_questions:>6,}" + _calls(plan, out)
                         + f"  {100 * out.saved:>5.1f}%")
    lines.extend(_pilot_note(plan))
    return "\n".join(lines) + "\n"


def _pilot_note(plan: SequentialPlan) -> list[str]:
    d = next((r.d_pp for r in plan.rows if r.target_d_pp is None and r.d_pp is not None),
             None)
    if d is None:
        return []
    return ["  pilot: the pilot's D_i as observed, not tilted (D = "
            + " / ".join(f"{d[k]:.1f}" for k in plan.kernels)
            + " pp)"]


def _calls(plan: SequentialPlan, out: DesignOutcome) -> str:
    per = plan.calls_per_question
    if per is None:
        return ""
    return f"  {out.mean_questions * per:>11,.0f}  {out.p90_questions * per:>8,}"
