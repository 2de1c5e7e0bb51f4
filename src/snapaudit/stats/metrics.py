"""Utility against gold: EM, token F1, the contains-gold match and the UNKNOWN rate, per
state (gold is read last).

EM is strict: the normalized answer equals a normalized alias. The *contains-gold* match is
its lenient twin for answers that are sentences ("The headquarters is in Austin, Texas."
against "Austin"): some normalized alias occurs in the normalized answer as a contiguous
sequence of whole tokens, as DPR's ``has_answer`` (string mode) checks retrieved passages,
on the benchmark's normalization instead of DPR's tokenizer. Every EM-match contains gold.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from snapaudit.errors import InputError
from snapaudit.stats.codec import decode
from snapaudit.stats.kernels import AnswerGrid
from snapaudit.stats.normalize import Normalizer


def exact_match(answer: str, aliases: Sequence[str], normalize: Normalizer) -> bool:
    """True when the normalized answer equals any normalized alias."""
    got = normalize(answer)
    return any(got == normalize(alias) for alias in aliases)


def contains_gold(answer: str, aliases: Sequence[str], normalize: Normalizer) -> bool:
    """True when some normalized alias is a whole-token run of the normalized answer (the
    normalizers collapse whitespace to single spaces, so padding both with a space makes a
    substring test exactly a token-sequence test; an alias that normalizes to nothing is
    contained only in an answer that does too, as EM)."""
    got = f" {normalize(answer)} "
    return any(f" {normalize(alias)} " in got for alias in aliases)


def token_f1(answer: str, aliases: Sequence[str], normalize: Normalizer) -> float:
    """Best SQuAD-style token F1 over the aliases."""
    return max(_f1(normalize(answer).split(), normalize(alias).split()) for alias in aliases)


def _f1(pred: list[str], gold: list[str]) -> float:
    return _f1_sets(pred, set(pred), gold, set(gold))


def _f1_sets(pred: list[str], pred_set: set[str], gold: list[str], gold_set: set[str]) -> float:
    """SQuAD token F1 of ``pred`` against ``gold`` (with their token sets)."""
    if pred == gold and pred:
        return 1.0  # what the formula gives: precision = recall = 1
    if pred_set.isdisjoint(gold_set):
        return 0.0
    if len(pred_set) == len(pred) and len(gold_set) == len(gold):
        common = len(pred_set & gold_set)  # no repeated token: the multiset overlap
    else:
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
    contains: float | None = None  # None: read from a document written before the key

    def to_json(self) -> dict[str, float]:
        out = {"em": self.em, "f1": self.f1, "unknown": self.unknown}
        if self.contains is not None:
            out["contains"] = self.contains
        return out


@dataclass(frozen=True)
class Utility:
    """Percentages over every question and repeat of a state; deltas are new - old (pp)."""

    states: Mapping[str, StateUtility]
    em_delta: float
    f1_delta: float
    contains_delta: float | None = None

    def to_json(self) -> dict[str, object]:
        out: dict[str, object] = {s: u.to_json() for s, u in self.states.items()}
        out["em_delta"] = self.em_delta
        out["f1_delta"] = self.f1_delta
        if self.contains_delta is not None:
            out["contains_delta"] = self.contains_delta
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Utility:
        """``delta`` (the secondary bootstrap's, written into this object) is not read here."""
        states = {k: decode(StateUtility, v) for k, v in data.items()
                  if k not in ("em_delta", "f1_delta", "contains_delta", "delta")}
        return decode(cls, data, states=states)


def check_gold(grid: AnswerGrid, gold: Mapping[str, Sequence[str]]) -> None:
    if all(map(gold.get, grid.question_ids)):  # every question has aliases (no Python loop)
        return
    missing = [q for q in grid.question_ids if not gold.get(q)]
    if missing:
        more = f" (+{len(missing) - 5} more)" if len(missing) > 5 else ""
        shown = ", ".join(missing[:5]) + more
        raise InputError(f"gold has no answers for {len(missing)} question(s): {shown}")


@dataclass(frozen=True)
class GoldCells:
    """EM, token F1, UNKNOWN and contains-gold of every (question, repeat) of one state:
    (n, r) arrays, questions in grid order (the values of :func:`exact_match`,
    :func:`token_f1`, :func:`is_unknown` and :func:`contains_gold`)."""

    em: np.ndarray
    f1: np.ndarray
    unknown: np.ndarray
    contains: np.ndarray


def score_grid(grid: AnswerGrid, gold: Mapping[str, Sequence[str]], normalize: Normalizer,
               states: Sequence[str]) -> dict[str, GoldCells]:
    """:class:`GoldCells` of ``states`` in one pass (gold must cover every question).

    The scores of a cell depend only on its normalized answer and its question's aliases, so
    each distinct answer is normalized once, each distinct alias list gets a number, and each
    distinct (aliases, normalized answer) pair is scored once, found with ``numpy.unique`` on
    integer codes."""
    values, codes = grid.distinct
    normal: dict[str, int] = {}
    of_value = np.array([normal.setdefault(normalize(v), len(normal)) for v in values],
                        dtype=np.int64)
    alias_lists: dict[tuple[str, ...], int] = {}
    of_question = np.array([alias_lists.setdefault(tuple(gold[q]), len(alias_lists))
                            for q in grid.question_ids], dtype=np.int64)
    raw = codes[grid.cell_rows(states)]  # (n, states, r): each cell's distinct answer
    pair = of_question[:, None, None] * max(1, len(normal)) + of_value[raw]
    pairs, cell = _unique(pair.ravel(), len(alias_lists) * max(1, len(normal)))
    normalized, lists = list(normal), list(alias_lists)
    unknown = normalize("UNKNOWN")
    em: list[bool] = []
    f1: list[float] = []
    unk: list[bool] = []
    contains: list[bool] = []
    current = -1
    alias_set: set[str] = set()
    padded: list[str] = []
    alias_tokens: list[tuple[list[str], set[str]]] = []
    which, answers = np.divmod(pairs, max(1, len(normal)))
    for i, code in zip(which.tolist(), answers.tolist(), strict=True):
        if i != current:
            current, aliases = i, [normalize(alias) for alias in lists[i]]
            alias_set = set(aliases)
            padded = [f" {alias} " for alias in alias_set]
            alias_tokens = [(toks, set(toks)) for toks in (alias.split() for alias in aliases)]
        got = normalized[code]
        match = got in alias_set
        em.append(match)
        unk.append(got == unknown)
        spaced = f" {got} "
        contains.append(match or any(alias in spaced for alias in padded))
        if match and got:  # F1 1.0 against the equal alias, the most any alias gives
            f1.append(1.0)
            continue
        pred = got.split()
        pred_set = set(pred)
        f1.append(max(_f1_sets(pred, pred_set, toks, tok_set) for toks, tok_set in alias_tokens))
    at = cell.reshape(grid.n, len(states), grid.repeats)
    em_, f1_, unk_ = np.array(em, dtype=bool), np.array(f1, dtype=np.float64), np.array(unk)
    has = np.array(contains, dtype=bool)
    return {s: GoldCells(em_[at[:, i]], f1_[at[:, i]], unk_[at[:, i]].astype(bool),
                         has[at[:, i]]) for i, s in enumerate(states)}


def _unique(keys: np.ndarray, space: int) -> tuple[np.ndarray, np.ndarray]:
    """``numpy.unique(keys, return_inverse=True)`` of keys in [0, space): through a table of
    the key space when it is small (at most 16M keys), else by sorting."""
    if space > 1 << 24:
        uniq, inverse = np.unique(keys, return_inverse=True)
        return uniq, inverse
    present = np.zeros(space, dtype=bool)
    present[keys] = True
    number = np.cumsum(present, dtype=np.int64) - 1
    return np.flatnonzero(present), number[keys]


def score_tables(grid: AnswerGrid, gold: Mapping[str, Sequence[str]], normalize: Normalizer,
                 state: str) -> tuple[list[list[float]], list[list[float]]]:
    """EM (0.0/1.0) and token F1 of every (question, repeat) of one state, questions in grid
    order: the values of :func:`exact_match` and :func:`token_f1`."""
    cells = score_grid(grid, gold, normalize, (state,))[state]
    em: list[list[float]] = cells.em.astype(np.float64).tolist()
    f1: list[list[float]] = cells.f1.tolist()
    return em, f1


def utility(grid: AnswerGrid, gold: Mapping[str, Sequence[str]], normalize: Normalizer,
            states: Sequence[str], old: str, new: str,
            cells: Mapping[str, GoldCells] | None = None) -> Utility:
    """Per-state EM, F1, UNKNOWN and contains-gold rates (``cells``: :func:`score_grid` of
    ``states``)."""
    check_gold(grid, gold)
    if cells is None:
        cells = score_grid(grid, gold, normalize, states)
    per: dict[str, StateUtility] = {}
    total = grid.n * grid.repeats
    for state in states:
        c = cells[state]
        f1 = _running_sum(c.f1.ravel())  # summed in question, repeat order as always
        em, unk = float(np.count_nonzero(c.em)), float(np.count_nonzero(c.unknown))
        has = float(np.count_nonzero(c.contains))
        per[state] = StateUtility(100 * em / total, 100 * f1 / total, 100 * unk / total,
                                  100 * has / total)
    contains = (per[new].contains or 0.0) - (per[old].contains or 0.0)
    return Utility(per, per[new].em - per[old].em, per[new].f1 - per[old].f1, contains)


def _running_sum(values: np.ndarray) -> float:
    """``0.0 + v_0 + v_1 + ...`` left to right, as a Python loop adds them: the last value of
    ``numpy.cumsum`` (an accumulation is sequential, never pairwise; ``0.0 +`` turns a
    negative zero into the loop's positive one)."""
    if values.size == 0:
        return 0.0
    return 0.0 + float(np.cumsum(values, dtype=np.float64)[-1])
