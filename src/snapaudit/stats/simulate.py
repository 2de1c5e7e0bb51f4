"""Cohorts simulated from known per-question answer distributions, with a known true D.

A :class:`QuestionType` gives the answer distribution of one question in the old and the new
state. Answers are strings ``"fact K"`` or ``"fact K variant V"``; the simulated semantic
kernel treats every variant of a fact as the same answer (a coarser equivalence than the exact
kernel, as a judge is). For the exact kernel (answer equality) and answer probabilities p (old)
and q (new)::

    within = (sum_a p_a^2 + sum_a q_a^2) / 2,   cross = sum_a p_a q_a,
    D = within - cross = ||p - q||^2 / 2

and the same over the fact-level distributions for the semantic kernel. A :class:`Mixture`
draws each question's type at random with fixed weights, so the true D of the population is
the weighted mean of the types' D (the quantity the whole-question bootstrap estimates).

:func:`simulate_cohort` draws one cohort as integer codes and :func:`per_question_d` computes
D_i of both kernels from them with the same arithmetic as :func:`snapaudit.stats.churn.per_question`
(bit-identical; :func:`cohort_tables` writes the cohort as answer rows and pair labels so the
real analysis can be run on it and compared).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from snapaudit.tables import AnswerRef, AnswerRow, PairLabel

OLD, NEW = "old", "new"


def fact_of(answer: str) -> str:
    """The fact class of a simulated answer: ``"fact 3 variant 1"`` -> ``"fact 3"``."""
    return answer.split(" variant ")[0]


@dataclass(frozen=True)
class QuestionType:
    """The answer distributions of one kind of question in the old and new state."""

    name: str
    old: Mapping[str, float]
    new: Mapping[str, float]

    def __post_init__(self) -> None:
        for dist in (self.old, self.new):
            if abs(sum(dist.values()) - 1.0) > 1e-12 or min(dist.values()) < 0:
                raise ValueError(f"{self.name}: probabilities must be >= 0 and sum to 1")

    def true_d(self, kernel: str) -> float:
        """Analytic D of this type (a fraction) under ``exact`` or ``semantic``."""
        p, q = self.old, self.new
        if kernel == "semantic":
            p, q = _by_fact(p), _by_fact(q)
        within = (sum(v * v for v in p.values()) + sum(v * v for v in q.values())) / 2
        cross = sum(v * q.get(a, 0.0) for a, v in p.items())
        return within - cross


def _by_fact(dist: Mapping[str, float]) -> dict[str, float]:
    out: dict[str, float] = {}
    for answer, prob in dist.items():
        out[fact_of(answer)] = out.get(fact_of(answer), 0.0) + prob
    return out


STABLE = QuestionType("stable", {"fact 0": 1.0}, {"fact 0": 1.0})
NOISY = QuestionType("noisy", {"fact 0": 0.5, "fact 0 variant 1": 0.3, "fact 1": 0.2},
                     {"fact 0": 0.5, "fact 0 variant 1": 0.3, "fact 1": 0.2})
SHIFT = QuestionType("shift", {"fact 0": 0.7, "fact 1": 0.3},
                     {"fact 0": 0.3, "fact 1": 0.5, "fact 2": 0.2})
FLIP = QuestionType("flip", {"fact 0": 1.0}, {"fact 1": 1.0})
PARAPHRASE = QuestionType("paraphrase", {"fact 0": 1.0}, {"fact 0 variant 1": 1.0})


@dataclass(frozen=True)
class Mixture:
    """Question types and the probability that a question is of each type."""

    types: tuple[QuestionType, ...]
    weights: tuple[float, ...]

    def __post_init__(self) -> None:
        if len(self.types) != len(self.weights) or not self.types:
            raise ValueError("one weight per question type")
        if abs(sum(self.weights) - 1.0) > 1e-9 or min(self.weights) < 0:
            raise ValueError("weights must be >= 0 and sum to 1")

    def true_d(self, kernel: str) -> float:
        """The population D (a fraction): the weighted mean of the types' D."""
        return sum(w * t.true_d(kernel) for t, w in zip(self.types, self.weights, strict=True))


def standard_mixture(d_pp: float, paraphrase_pp: float = 0.0) -> Mixture:
    """Stable, noisy, partially shifting and flipping questions with exact true D = ``d_pp``.

    Up to 10% of questions shift partially (D = 0.12 each), flips (D = 1) make up the rest of
    the churn, and ``paraphrase_pp`` points come from questions whose answer changes wording
    only (exact D = 1, semantic D = 0). The remaining questions are 60% stable, 40% noisy.
    """
    d, para = d_pp / 100, paraphrase_pp / 100
    rest = d - para
    if rest < 0 or d > 0.5:
        raise ValueError("need 0 <= paraphrase_pp <= d_pp <= 50")
    shift = min(0.1, rest / SHIFT.true_d("exact"))
    flip = rest - shift * SHIFT.true_d("exact")
    other = 1.0 - shift - flip - para
    return Mixture((STABLE, NOISY, SHIFT, FLIP, PARAPHRASE),
                   (0.6 * other, 0.4 * other, shift, flip, para))


@dataclass(frozen=True)
class Cohort:
    """Integer codes of one simulated cohort: (n, r) answers per state, exact and fact level."""

    types: np.ndarray
    exact_old: np.ndarray
    exact_new: np.ndarray
    fact_old: np.ndarray
    fact_new: np.ndarray
    vocabulary: tuple[str, ...]

    @property
    def n(self) -> int:
        return int(self.exact_old.shape[0])

    @property
    def repeats(self) -> int:
        return int(self.exact_old.shape[1])


def simulate_cohort(mixture: Mixture, n: int, repeats: int,
                    rng: np.random.Generator) -> Cohort:
    """Draw each question's type, then ``repeats`` answers per state, independently."""
    vocab = sorted({a for t in mixture.types for d in (t.old, t.new) for a in d})
    code = {a: i for i, a in enumerate(vocab)}
    facts = sorted({fact_of(a) for a in vocab})
    fact_code = np.array([facts.index(fact_of(a)) for a in vocab])
    types = rng.choice(len(mixture.types), size=n, p=np.asarray(mixture.weights))
    old = np.empty((n, repeats), dtype=np.int64)
    new = np.empty((n, repeats), dtype=np.int64)
    for t, qtype in enumerate(mixture.types):
        rows = np.flatnonzero(types == t)
        for out, dist in ((old, qtype.old), (new, qtype.new)):
            answers = np.array([code[a] for a in dist])
            probs = np.array(list(dist.values()))
            out[rows] = answers[rng.choice(len(answers), size=(rows.size, repeats), p=probs)]
    return Cohort(types, old, new, fact_code[old], fact_code[new], tuple(vocab))


def per_question_d(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """D_i from (n, r) answer codes, with the arithmetic of :func:`churn.per_question`."""
    r = old.shape[1]
    pairs = [(j, k) for j, k in combinations(range(r), 2)]
    same_old = sum((old[:, j] == old[:, k]).astype(np.int64) for j, k in pairs)
    same_new = sum((new[:, j] == new[:, k]).astype(np.int64) for j, k in pairs)
    cross = (old[:, :, None] == new[:, None, :]).reshape(old.shape[0], -1).sum(axis=1)
    w = (same_old / len(pairs) + same_new / len(pairs)) / 2
    c = cross / (r * r)
    d: np.ndarray = w - c
    return d


def cohort_values(cohort: Cohort) -> np.ndarray:
    """The (n, 2) matrix of per-question D_i: columns exact, semantic (fractions)."""
    return np.column_stack([per_question_d(cohort.exact_old, cohort.exact_new),
                            per_question_d(cohort.fact_old, cohort.fact_new)])


def question_ids(n: int) -> list[str]:
    """Ids that sort in cohort order (the analysis orders questions by id)."""
    width = len(str(max(n - 1, 0)))
    return [f"q{i:0{width}d}" for i in range(n)]


def cohort_tables(cohort: Cohort) -> tuple[list[AnswerRow], list[PairLabel]]:
    """Answer rows and the fact-level pair labels (every pair of the two states)."""
    ids = question_ids(cohort.n)
    rows: list[AnswerRow] = []
    labels: list[PairLabel] = []
    for i, qid in enumerate(ids):
        answers: dict[AnswerRef, tuple[str, int]] = {}
        for state, codes, facts in ((OLD, cohort.exact_old, cohort.fact_old),
                                    (NEW, cohort.exact_new, cohort.fact_new)):
            for j in range(cohort.repeats):
                text = cohort.vocabulary[int(codes[i, j])]
                rows.append(AnswerRow(qid, state, j + 1, text))
                answers[AnswerRef(state, j + 1)] = (text, int(facts[i, j]))
        for a, b in combinations(sorted(answers), 2):
            labels.append(PairLabel(qid, a, b, answers[a][1] == answers[b][1]))
    return rows, labels

