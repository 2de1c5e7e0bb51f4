"""Human judges against the primary judge and against each other (``judges.human``).

For each human judge H (labels of :mod:`snapaudit.stats.human`), over the pairs both H and
the other judge decided (``unsure`` left out and counted): raw agreement, Cohen's kappa, the
share of questions with identical partitions and their question-cluster bootstrap intervals
(:func:`snapaudit.stats.agreement.agreement`, seeded). Semantic D (pp) under H and under the
primary judge is computed on the questions H labelled *completely* (no ``unsure`` among the
old x old, new x new and old x new pairs), so both numbers stand on the same questions;
between two annotators, D under each on the questions both labelled completely.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

from snapaudit.errors import InputError
from snapaudit.stats.agreement import JudgeAgreement, agreement
from snapaudit.stats.churn import per_question
from snapaudit.stats.codec import decode
from snapaudit.stats.human import HumanLabel, decided
from snapaudit.stats.kernels import AnswerGrid, SemanticKernel
from snapaudit.tables import AnswerRef, AnswerRow, PairLabel


@dataclass(frozen=True)
class Comparison:
    """One judge pair's agreement (None when no pair is decided by both) and unsure count."""

    agreement: JudgeAgreement | None
    unsure: int
    d_questions: int

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = self.agreement.to_json() if self.agreement else {"pairs": 0}
        return {**body, "unsure": self.unsure, "d_questions": self.d_questions}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Comparison:
        body = {k: v for k, v in data.items() if k not in ("unsure", "d_questions")}
        empty = {k: v for k, v in body.items() if k != "judges"} == {"pairs": 0}
        agreement = None if empty else decode(JudgeAgreement, body)
        return cls(agreement, int(data["unsure"]), int(data["d_questions"]))


@dataclass(frozen=True)
class HumanJudges:
    primary: str
    questions: Mapping[str, int]  # judge -> questions labelled
    pairs: Mapping[str, int]  # judge -> pairs labelled (unsure included)
    unsure: Mapping[str, int]
    vs_primary: Mapping[str, Comparison]
    between: Sequence[tuple[str, str, Comparison]] = field(default_factory=tuple)

    def to_json(self) -> dict[str, Any]:
        return {"primary": self.primary,
                "judges": {h: {"questions": self.questions[h], "pairs": self.pairs[h],
                               "unsure": self.unsure[h],
                               "vs_primary": self.vs_primary[h].to_json()}
                           for h in sorted(self.vs_primary)},
                "between": [{"judges": [a, b], **c.to_json()} for a, b, c in self.between]}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> HumanJudges:
        judges: Mapping[str, Any] = data["judges"]
        between = tuple((str(b["judges"][0]), str(b["judges"][1]),
                         Comparison.from_json(b))
                        for b in data.get("between", ()))
        return cls(str(data["primary"]), {h: int(j["questions"]) for h, j in judges.items()},
                   {h: int(j["pairs"]) for h, j in judges.items()},
                   {h: int(j["unsure"]) for h, j in judges.items()},
                   {h: Comparison.from_json(j["vs_primary"]) for h, j in judges.items()},
                   between)


def _key(qid: str, a: AnswerRef, b: AnswerRef) -> tuple[str, AnswerRef, AnswerRef]:
    lo, hi = sorted((a, b))
    return qid, lo, hi


def complete_questions(grid: AnswerGrid, labels: Sequence[HumanLabel], old: str, new: str,
                       questions: Sequence[str]) -> list[str]:
    """Of ``questions``, those whose old and new answers are all decided pairwise."""
    done = {_key(lab.question_id, lab.a, lab.b) for lab in labels if lab.label != "unsure"}
    refs = [*grid.refs(old), *grid.refs(new)]
    return [q for q in questions if q in grid.index and all(
        _key(q, a, b) in done for a, b in combinations(refs, 2))]


def _d_hat(answers: Sequence[AnswerRow], labels: Sequence[PairLabel], judges: Sequence[str],
           questions: Sequence[str], old: str, new: str) -> dict[str, float | None]:
    out: dict[str, float | None] = {j: None for j in judges}
    if not questions:
        return out
    chosen = set(questions)
    grid = AnswerGrid.from_rows([r for r in answers if r.question_id in chosen])
    for judge in judges:
        try:
            out[judge] = 100 * per_question(grid, SemanticKernel(labels, judge), old, new).d_hat
        except InputError:
            out[judge] = None
    return out


def _compare(answers: Sequence[AnswerRow], grid: AnswerGrid, first: Sequence[PairLabel],
             a: str, b: str, human: Sequence[Sequence[HumanLabel]], old: str, new: str,
             draws: int, seed: int) -> Comparison:
    """Judge ``a`` (labels ``first`` plus the decided ones of ``human``) against ``b``."""
    labelled = [{_key(x.question_id, x.a, x.b) for x in h} for h in human]
    if len(human) == 2:
        common = labelled[0] & labelled[1]
        unsure = len({_key(x.question_id, x.a, x.b) for h in human for x in h
                      if x.label == "unsure"} & common)
    else:
        primary_keys = {_key(x.question_id, x.a, x.b) for x in first}
        unsure = sum(1 for x in human[0] if x.label == "unsure"
                     and _key(x.question_id, x.a, x.b) in primary_keys)
    labels = [*first, *(p for h in human for p in decided(h))]
    qs = sorted({x.question_id for x in human[0]})
    for h in human[1:]:
        qs = [q for q in qs if q in {x.question_id for x in h}]
    complete = qs
    for h in human:
        complete = complete_questions(grid, h, old, new, complete)
    d_hat = _d_hat(answers, labels, (a, b), complete, old, new)
    return Comparison(agreement(labels, a, b, d_hat, draws, seed), unsure, len(complete))


def human_judges(answers: Sequence[AnswerRow], primary_labels: Sequence[PairLabel],
                 primary: str, human: Mapping[str, Sequence[HumanLabel]], old: str, new: str,
                 draws: int, seed: int) -> HumanJudges | None:
    """Every human judge against ``primary`` and each pair of human judges (None when there
    is no human label)."""
    human = {h: labs for h, labs in human.items() if labs}
    if not human:
        return None
    grid = AnswerGrid.from_rows(answers)
    vs: dict[str, Comparison] = {}
    for name, labs in human.items():
        asked = {x.question_id for x in labs}
        first = [x for x in primary_labels if x.judge == primary and x.question_id in asked]
        vs[name] = _compare(answers, grid, first, primary, name, [labs], old, new, draws,
                            seed)
    between = [(a, b, _compare(answers, grid, [], a, b, [human[a], human[b]], old, new,
                               draws, seed))
               for a, b in combinations(sorted(human), 2)]
    return HumanJudges(
        primary, {h: len({x.question_id for x in v}) for h, v in human.items()},
        {h: len(v) for h, v in human.items()},
        {h: sum(1 for x in v if x.label == "unsure") for h, v in human.items()}, vs, between)
