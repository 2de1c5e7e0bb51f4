"""Utility against gold: EM, token F1 and the UNKNOWN rate, per state (gold is read last)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from snapaudit.errors import InputError
from snapaudit.stats.kernels import AnswerGrid
from snapaudit.stats.normalize import Normalizer


def exact_match(answer: str, aliases: Sequence[str], normalize: Normalizer) -> bool:
    """True when the normalized answer equals any normalized alias."""
    got = normalize(answer)
    return any(got == normalize(alias) for alias in aliases)


def token_f1(answer: str, aliases: Sequence[str], normalize: Normalizer) -> float:
    """Best SQuAD-style token F1 over the aliases."""
    return max(_f1(normalize(answer).split(), normalize(alias).split()) for alias in aliases)


def _f1(pred: list[str], gold: list[str]) -> float:
    if pred == gold and pred:
        return 1.0  # what the formula gives: precision = recall = 1
    if set(pred).isdisjoint(gold):
        return 0.0
    common = sum((Counter(pred) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def is_unknown(answer: str, normalize: Normalizer) -> bool:
    """The exact response UNKNOWN, after normalization."""
    return normalize(answer) == normalize("UNKNOWN")


@dataclass(frozen=True, slots=True)
class StateUtility:
    em: float
    f1: float
    unknown: float

    def to_json(self) -> dict[str, float]:
        return {"em": self.em, "f1": self.f1, "unknown": self.unknown}


@dataclass(frozen=True)
class Utility:
    """Percentages over every question and repeat of a state; deltas are new - old (pp)."""

    states: Mapping[str, StateUtility]
    em_delta: float
    f1_delta: float

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {s: u.to_json() for s, u in self.states.items()}
        out["em_delta"] = self.em_delta
        out["f1_delta"] = self.f1_delta
        return out


def check_gold(grid: AnswerGrid, gold: Mapping[str, Sequence[str]]) -> None:
    missing = [q for q in grid.question_ids if not gold.get(q)]
    if missing:
        more = f" (+{len(missing) - 5} more)" if len(missing) > 5 else ""
        shown = ", ".join(missing[:5]) + more
        raise InputError(f"gold has no answers for {len(missing)} question(s): {shown}")


def em_table(grid: AnswerGrid, gold: Mapping[str, Sequence[str]], normalize: Normalizer,
             state: str) -> list[list[bool]]:
    """EM of every (question, repeat) of one state, questions in grid order."""
    aliases = _gold_norm(grid, gold, normalize)
    return [[normalize(a) in aliases[q] for a in grid.answers[(q, state)]]
            for q in grid.question_ids]


def score_tables(grid: AnswerGrid, gold: Mapping[str, Sequence[str]], normalize: Normalizer,
                 state: str) -> tuple[list[list[float]], list[list[float]]]:
    """EM (0.0/1.0) and token F1 of every (question, repeat) of one state, questions in grid
    order: the values of :func:`exact_match` and :func:`token_f1`, each alias normalized once
    and each distinct (question, answer) scored once."""
    em: list[list[float]] = []
    f1: list[list[float]] = []
    for q in grid.question_ids:
        aliases = [normalize(alias) for alias in gold[q]]
        alias_set, alias_tokens = set(aliases), [alias.split() for alias in aliases]
        memo: dict[str, tuple[float, float]] = {}
        for a in grid.answers[(q, state)]:
            if a not in memo:
                got = normalize(a)
                memo[a] = (float(got in alias_set),
                           max(_f1(got.split(), toks) for toks in alias_tokens))
        em.append([memo[a][0] for a in grid.answers[(q, state)]])
        f1.append([memo[a][1] for a in grid.answers[(q, state)]])
    return em, f1


def _gold_norm(grid: AnswerGrid, gold: Mapping[str, Sequence[str]], normalize: Normalizer
               ) -> dict[str, set[str]]:
    return {q: {normalize(alias) for alias in gold[q]} for q in grid.question_ids}


def utility(grid: AnswerGrid, gold: Mapping[str, Sequence[str]], normalize: Normalizer,
            states: Sequence[str], old: str, new: str) -> Utility:
    check_gold(grid, gold)
    per: dict[str, StateUtility] = {}
    unknown = normalize("UNKNOWN")
    memo: dict[tuple[str, str], float] = {}
    prepared = {}
    for q in grid.question_ids:
        aliases = [normalize(alias) for alias in gold[q]]
        prepared[q] = set(aliases), [alias.split() for alias in aliases]
    for state in states:
        em = f1 = unk = 0.0
        for q in grid.question_ids:
            alias_set, alias_tokens = prepared[q]
            for a in grid.answers[(q, state)]:
                got = normalize(a)  # the same values as exact_match / token_f1 / is_unknown
                em += got in alias_set
                key = (q, got)
                if key not in memo:
                    memo[key] = max(_f1(got.split(), toks) for toks in alias_tokens)
                f1 += memo[key]
                unk += got == unknown
        total = grid.n * grid.repeats
        per[state] = StateUtility(100 * em / total, 100 * f1 / total, 100 * unk / total)
    return Utility(per, per[new].em - per[old].em, per[new].f1 - per[old].f1)
