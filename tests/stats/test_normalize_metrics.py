"""Normalization (NQ, TriviaQA), EM, token F1, UNKNOWN and per-state utility."""

from __future__ import annotations

import random

import pytest

from snapaudit.errors import ConfigError, InputError
from snapaudit.stats.kernels import AnswerGrid
from snapaudit.stats.metrics import (
    contains_gold,
    exact_match,
    is_unknown,
    score_grid,
    score_tables,
    token_f1,
    utility,
)
from snapaudit.stats.normalize import normalize_nq, normalize_triviaqa, normalizer
from tests.stats._analysis_helpers import rows


@pytest.mark.parametrize(("text", "expected"), [
    ("The Beatles", "beatles"),
    ("  A  tale of\ttwo   cities. ", "tale of two cities"),
    ("Don't stop!", "dont stop"),
    ("an apple, the pear", "apple pear"),
    ("Theatre", "theatre"),                      # articles only as whole words
    ("Sunset_Blvd", "sunsetblvd"),               # '_' is punctuation: NQ deletes it
    ("Café", "café"),                             # NFD first: accents survive as combining marks
])
def test_normalize_nq(text: str, expected: str) -> None:
    import unicodedata

    expected = unicodedata.normalize("NFD", expected)
    assert normalize_nq(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Sunset_Boulevard", "sunset boulevard"),     # underscores become spaces
    ("Rock ‘n’ Roll", "rock n roll"),             # Unicode quotes become spaces
    ("Don't", "don t"),                            # punctuation becomes a space, not deleted
    ("O´Brien`s", "o brien s"),
    ("The Who", "who"),
])
def test_normalize_triviaqa(text: str, expected: str) -> None:
    assert normalize_triviaqa(text) == expected


def test_normalizer_by_name() -> None:
    assert normalizer("nq") is normalize_nq
    assert normalizer("triviaqa") is normalize_triviaqa
    with pytest.raises(ConfigError):
        normalizer("squad")


def test_em_f1_unknown() -> None:
    aliases = ["Barack Obama", "Obama"]
    assert exact_match("obama.", aliases, normalize_nq)
    assert not exact_match("President Obama", aliases, normalize_nq)
    # "president obama" vs "barack obama": common 1, P=1/2, R=1/2 -> 0.5; vs "obama": P=1/2, R=1
    assert token_f1("President Obama", aliases, normalize_nq) == pytest.approx(2 / 3)
    assert token_f1("Lincoln", aliases, normalize_nq) == 0.0
    assert is_unknown("unknown.", normalize_nq)
    assert not is_unknown("I do not know", normalize_nq)


def test_utility_per_state_and_delta() -> None:
    table = {"q1": {"A": ["Paris", "UNKNOWN"], "B": ["paris", "Paris"]},
             "q2": {"A": ["Rome", "Rome"], "B": ["Milan", "Rome city"]}}
    gold = {"q1": ("Paris",), "q2": ("Rome",)}
    grid = AnswerGrid.from_rows(rows(table))
    u = utility(grid, gold, normalize_nq, ("A", "B"), "A", "B")
    assert u.states["A"].em == 75.0          # 3 of 4
    assert u.states["B"].em == 50.0          # 2 of 4
    assert u.states["A"].unknown == 25.0
    assert u.states["B"].f1 == pytest.approx(100 * (1 + 1 + 0 + 2 / 3) / 4)
    assert u.em_delta == -25.0


def test_utility_missing_gold_is_an_error() -> None:
    grid = AnswerGrid.from_rows(rows({"q1": {"A": ["x", "x"], "B": ["y", "y"]}}))
    with pytest.raises(InputError, match="no answers for 1 question"):
        utility(grid, {}, normalize_nq, ("A", "B"), "A", "B")


@pytest.mark.parametrize("benchmark", ["nq", "triviaqa"])
def test_score_tables_equal_exact_match_and_token_f1_answer_by_answer(benchmark: str) -> None:
    rng = random.Random(5)
    words = ["the", "Paris", "paris,", "city", "of", "light", "A", "London", "UNKNOWN"]
    table = {f"q{i}": {s: [" ".join(rng.choices(words, k=rng.randint(1, 4))) for _ in range(3)]
                       for s in ("A", "B")} for i in range(40)}
    gold = {q: [" ".join(rng.choices(words, k=rng.randint(1, 3))) for _ in range(2)]
            for q in table}
    grid = AnswerGrid.from_rows(rows(table))
    norm = normalizer(benchmark)
    em, f1 = score_tables(grid, gold, norm, "B")
    assert em == [[float(exact_match(a, gold[q], norm)) for a in table[q]["B"]]
                  for q in grid.question_ids]
    assert f1 == [[token_f1(a, gold[q], norm) for a in table[q]["B"]]
                  for q in grid.question_ids]
    assert 0 < sum(map(sum, em)) < len(em) * 3  # both outcomes occur
    cells = score_grid(grid, gold, norm, ("A", "B"))["B"]
    assert cells.contains.tolist() == [[contains_gold(a, gold[q], norm) for a in table[q]["B"]]
                                       for q in grid.question_ids]
    assert (cells.contains | ~cells.em).all()  # EM implies contains
    assert cells.contains.sum() > cells.em.sum()  # and containment adds matches


def test_contains_gold_is_whole_token_containment_beside_strict_em() -> None:
    aliases = ["Austin", "Austin, Texas"]
    assert contains_gold("The headquarters is in Austin, Texas.", aliases, normalize_nq)
    assert not exact_match("The headquarters is in Austin, Texas.", aliases, normalize_nq)
    assert contains_gold("austin", aliases, normalize_nq)  # every EM-match contains gold
    assert not contains_gold("Austinville is near", aliases, normalize_nq)  # whole tokens only
    assert not contains_gold("Texas, Austin", ["Austin Texas"], normalize_nq)  # in order
    assert not contains_gold("Paris", ["a"], normalize_nq)  # an alias normalized to nothing:
    assert contains_gold("An", ["the"], normalize_nq)  # only in an answer that is nothing, as EM


def test_utility_contains_gold_differs_from_em_by_hand() -> None:
    # gold q1 "Paris", q2 "Rome". A: q1 "It is Paris." (contains), "Paris" (EM);
    # q2 "Rome" (EM), "Romeo" (neither). B: q1 "Lyon, not Paris" (contains), "Lyon";
    # q2 "In Rome city" (contains), "Milan".
    table = {"q1": {"A": ["It is Paris.", "Paris"], "B": ["Lyon, not Paris", "Lyon"]},
             "q2": {"A": ["Rome", "Romeo"], "B": ["In Rome city", "Milan"]}}
    gold = {"q1": ("Paris",), "q2": ("Rome",)}
    grid = AnswerGrid.from_rows(rows(table))
    u = utility(grid, gold, normalize_nq, ("A", "B"), "A", "B")
    assert (u.states["A"].em, u.states["A"].contains) == (50.0, 75.0)   # 2 and 3 of 4
    assert (u.states["B"].em, u.states["B"].contains) == (0.0, 50.0)    # 0 and 2 of 4
    assert (u.em_delta, u.contains_delta) == (-50.0, -25.0)
    assert u.to_json()["A"] == {"em": 50.0, "f1": u.states["A"].f1, "unknown": 0.0,
                                "contains": 75.0}
    assert u.to_json()["contains_delta"] == -25.0

