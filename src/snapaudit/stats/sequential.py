"""Sequential looks: a gate decided on blocks of questions, its error held over every look.

With ``looks = K`` the cohort's N planned questions are taken in K blocks in cohort order
(the order of the questions' first appearance in an answers table): look k sees the first
n_k = floor(k N / K) questions (information fraction t_k = n_k / N). At each look every
gate kernel gets a *repeated confidence bound*: the whole-question bootstrap of the mean of
its D_i over those questions (exact where the values lie on the grid, as for the fixed
design) cut at the look's nominal level p_k = 1 - Phi(c_k), c_k the group-sequential
boundary of :mod:`snapaudit.stats.spending` (alpha = 0.05 one-sided for each claim):

- lower bound = the p_k quantile, upper bound = the 1 - p_k quantile, the upper one over
  the look's questions plus one pseudo-question at the top of D_i's range (below);
- the gate (:mod:`snapaudit.stats.gate`) is evaluated with those bounds as ``lcb95`` and
  ``ucb95``: INCOMPATIBLE when every rule holds, COMPATIBLE (with a margin) when every gate
  kernel's upper bound is below the margin; the audit stops at the first look that
  establishes either, and at the last look gives the gate's verdict (UNDECIDED or EXCESS
  CHURN NOT SHOWN) otherwise.

**The upper bound counts one unseen churning question** (:mod:`snapaudit.stats.upper`): when
churn sits in a few questions, a block that holds none of them would have an upper bound of
0 at every level and declare COMPATIBLE for any margin (5% flipping questions: none among
the first 50 in 0.95^50 = 7.7% of audits). Measured (``bench/sequential_calibration.py``,
2,000 audits of 400 questions, K = 8; docs/analysis.md "Sequential looks"): without the
pseudo-question, COMPATIBLE at D = M in a world of flips and stable questions was declared
in 9.3% of audits at M = 5 pp and 61.6% at M = 1 pp; with it in 2.2% and 4.9%.

Each claim is an intersection-union test over the gate's kernels, so its error is held by
each kernel's own sequential test: P(INCOMPATIBLE at any look | D <= 0) <= 0.05 and
P(COMPATIBLE at any look | D >= margin) <= 0.05 (asymptotically, by the canonical joint
distribution; ``bench/sequential_calibration.py`` measures both by simulation). With K = 1
the bounds are the fixed design's lcb95 / ucb95 exactly (p_1 = 0.05).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field

import numpy as np

from snapaudit.errors import ConfigError, InputError
from snapaudit.stats.bootstrap import Method
from snapaudit.stats.cluster import Resampling
from snapaudit.stats.codec import decode
from snapaudit.stats.gate import GateConfig, evaluate
from snapaudit.stats.upper import upper_bootstrap

ALPHA = 0.05
MIN_FIRST_BLOCK = 10  # questions: a bootstrap bound on fewer says little
SPENDING = "O'Brien-Fleming-type alpha spending (Lan-DeMets), one-sided 0.05 per claim"
CONTINUE = "continue"
STOPS = ("incompatible", "compatible")


def block_sizes(planned: int, looks: int) -> tuple[int, ...]:
    """n_k = floor(k N / K), k = 1..K: the questions each look sees."""
    return tuple((k * planned) // looks for k in range(1, looks + 1))


def check_design(planned: int, looks: int) -> None:
    """One line for a design that cannot be run: looks < 1, or a first block under
    :data:`MIN_FIRST_BLOCK` questions."""
    if looks < 1:
        raise ConfigError(f"looks must be at least 1, got {looks}")
    first = planned // looks
    if looks > 1 and first < MIN_FIRST_BLOCK:
        raise ConfigError(f"looks = {looks} over {planned} questions gives a first block of "
                         f"{first} question(s); each look needs at least {MIN_FIRST_BLOCK} "
                         f"(use at most {max(1, planned // MIN_FIRST_BLOCK)} looks)")


@dataclass(frozen=True, slots=True)
class LookBound:
    """One kernel at one look (pp): D over the look's questions and its repeated bounds."""

    d_hat: float
    lcb: float
    ucb: float

    def to_json(self) -> dict[str, float]:
        return asdict(self)


@dataclass(frozen=True)
class Look:
    """One look: its questions, boundary (z; None where no alpha is spent), the nominal
    one-sided level of its bounds, each gate kernel's bounds and what it decided."""

    look: int
    questions: int
    boundary: float | None
    nominal: float
    kernels: Mapping[str, LookBound]
    decision: str  # continue | incompatible | compatible | the last look's verdict key

    def to_json(self) -> dict[str, object]:
        return {"look": self.look, "questions": self.questions, "boundary": self.boundary,
                "nominal": self.nominal,
                "kernels": {k: v.to_json() for k, v in self.kernels.items()},
                "decision": self.decision}


@dataclass(frozen=True)
class Sequential:
    """``results.json`` ``sequential``: the design and every look taken."""

    looks_planned: int
    questions_planned: int
    looks: tuple[Look, ...] = ()
    margin_pp: float | None = None
    alpha: float = ALPHA
    spending: str = SPENDING
    calls_per_question: int | None = field(default=None)  # answer calls, when known

    @property
    def looks_done(self) -> int:
        return len(self.looks)

    @property
    def stop_reason(self) -> str | None:
        """``incompatible`` / ``compatible`` when a look established it, ``last_look``
        when every look was taken without, None while looks remain."""
        if self.looks and self.looks[-1].decision in STOPS:
            return self.looks[-1].decision
        return "last_look" if self.looks_done == self.looks_planned else None

    @property
    def stopped(self) -> bool:
        """Whether a look established a claim (the audit stopped there)."""
        return self.stop_reason in STOPS

    @property
    def questions_used(self) -> int:
        return self.looks[-1].questions if self.looks else 0

    def to_json(self) -> dict[str, object]:
        return {"looks_planned": self.looks_planned, "looks_done": self.looks_done,
                "stopped": self.stopped, "stop_reason": self.stop_reason,
                "questions_used": self.questions_used,
                "questions_planned": self.questions_planned, "margin_pp": self.margin_pp,
                "alpha": self.alpha, "spending": self.spending,
                "calls_per_question": self.calls_per_question,
                "looks": [k.to_json() for k in self.looks]}

    @classmethod
    def from_json(cls, data: Mapping[str, object]) -> Sequential:
        return decode(cls, data)

    def calls(self) -> tuple[int, int] | None:
        """(answer calls made, answer calls of the fixed design), when known."""
        if self.calls_per_question is None:
            return None
        return (self.questions_used * self.calls_per_question,
                self.questions_planned * self.calls_per_question)


@dataclass(frozen=True)
class LookData:
    """What every look reads: per-question values of the gate's kernels in cohort order
    (n, m), their names, the resampling and the bootstrap settings of the analysis."""

    values: np.ndarray
    kernels: tuple[str, ...]
    resampling: Resampling
    repeats: int
    draws: int
    seed: int
    method: Method


def take_looks(data: LookData, gate: GateConfig, looks: int, planned: int,
               calls_per_question: int | None = None) -> Sequential:
    """Every look the data reach, in order, stopping at the first that establishes a claim
    (see the module doc). Looks beyond the data are not taken."""
    from snapaudit.stats.spending import boundaries  # scipy: only when a look is taken

    check_design(planned, looks)
    sizes = block_sizes(planned, looks)
    cvals = boundaries([n / planned for n in sizes], ALPHA)
    taken: list[Look] = []
    for k, (n, c) in enumerate(zip(sizes, cvals, strict=True), start=1):
        if n > data.values.shape[0]:
            break
        look = _look(data, gate, k, n, c, last=k == looks)
        taken.append(look)
        if look.decision in STOPS:
            break
    return Sequential(looks, planned, tuple(taken), gate.margin_pp,
                      calls_per_question=calls_per_question)


def _look(data: LookData, gate: GateConfig, k: int, n: int, c: float, last: bool) -> Look:
    from scipy.special import ndtr

    nominal = float(1.0 - ndtr(c)) if np.isfinite(c) else 0.0
    keep = np.zeros(data.values.shape[0], dtype=bool)
    keep[:n] = True
    sub, res = data.values[:n], data.resampling.subset(keep)
    boot = res.intervals(sub, data.draws, data.seed, method=data.method, repeats=data.repeats)
    upper = upper_bootstrap(sub, res, data.draws, data.seed, method=data.method,
                            repeats=data.repeats)
    bounds = {}
    for col, name in enumerate(data.kernels):
        lo = boot.bounds(col, nominal, scale=100.0)[0]
        hi = upper.bounds(col, nominal, scale=100.0)[1]
        bounds[name] = LookBound(100.0 * float(sub[:, col].mean()), lo, hi)
    result = evaluate(gate, {name: {"d_hat": b.d_hat, "lcb95": b.lcb, "ucb95": b.ucb}
                             for name, b in bounds.items()})
    decision = result.verdict if (last or result.verdict in STOPS) else CONTINUE
    return Look(k, n, float(c) if np.isfinite(c) else None, nominal, bounds, decision)


def stop_bounds(seq: Sequential) -> Mapping[str, LookBound]:
    """The bounds of the look the audit ended at (the gate's ``lcb95``/``ucb95``)."""
    if not seq.looks:
        raise InputError("no look was taken")
    return seq.looks[-1].kernels


def cohort_order(question_ids: Sequence[str], appearance: Sequence[str]) -> np.ndarray:
    """Indices into ``question_ids`` (the grid's order) of ``appearance`` (first appearance
    in the table: the cohort order the looks follow)."""
    index = {q: i for i, q in enumerate(question_ids)}
    return np.array([index[q] for q in appearance], dtype=np.intp)
