"""Human judges against the primary judge and each other, hand-computed."""

from __future__ import annotations

from itertools import combinations

import pytest

from snapaudit.stats.human import HumanLabel, Label
from snapaudit.stats.human_agreement import human_judges
from snapaudit.tables import AnswerRef, AnswerRow, PairLabel

REFS = [AnswerRef("new", 1), AnswerRef("new", 2), AnswerRef("old", 1), AnswerRef("old", 2)]
PAIRS = list(combinations(REFS, 2))  # n1n2, n1o1, n1o2, n2o1, n2o2, o1o2
CROSS = {1, 2, 3, 4}  # the old x new pairs


def _answers() -> list[AnswerRow]:
    return [AnswerRow(q, r.state, r.repeat, f"{q} {r.state}{r.repeat}")
            for q in ("q1", "q2", "q3") for r in REFS]


def _primary() -> list[PairLabel]:
    """q1 and q3: every pair the same; q2: the same within a state, different across."""
    return [PairLabel(q, a, b, q != "q2" or i not in CROSS, "rule")
            for q in ("q1", "q2", "q3") for i, (a, b) in enumerate(PAIRS)]


def _human(judge: str, labels: dict[str, list[Label]]) -> list[HumanLabel]:
    return [HumanLabel(q, a, b, lab, judge) for q, row in labels.items()
            for (a, b), lab in zip(PAIRS, row, strict=True)]


S: Label = "same"
D: Label = "different"
U: Label = "unsure"
ALICE = _human("human:alice", {"q1": [S, S, D, U, S, S],  # one disagreement, one unsure
                               "q2": [S, D, D, D, D, S],  # as the primary judge
                               "q3": [S, D, D, D, D, S]})  # 4 disagreements
BOB = _human("human:bob", {"q1": [S] * 6, "q2": [S, D, D, D, D, S]})


def test_a_human_judge_against_the_primary_judge() -> None:
    out = human_judges(_answers(), _primary(), "rule", {"human:alice": ALICE}, "old", "new",
                       draws=400, seed=5)
    assert out is not None
    vs = out.vs_primary["human:alice"]
    assert vs.agreement is not None and vs.unsure == 1
    a = vs.agreement
    # 17 decided pairs, 12 agree; primary 13/17 same, alice 8/17 same
    assert (a.pairs, a.questions) == (17, 3)
    assert a.agreement == pytest.approx(100 * 12 / 17)
    assert a.kappa == pytest.approx(64 / 149)  # po = 12/17, pe = 140/289
    assert a.partitions_identical == pytest.approx(100 / 3)  # q2 only
    lo, hi = a.agreement_ci95
    assert lo <= a.agreement <= hi
    # D on the questions alice labelled completely (q2, q3): rule (1 + 0) / 2, alice (1 + 1) / 2
    assert vs.d_questions == 2
    assert a.d_hat == {"rule": pytest.approx(50.0), "human:alice": pytest.approx(100.0)}
    assert (out.questions["human:alice"], out.pairs["human:alice"],
            out.unsure["human:alice"]) == (3, 18, 1)


def test_two_annotators_against_each_other() -> None:
    out = human_judges(_answers(), _primary(), "rule",
                       {"human:alice": ALICE, "human:bob": BOB}, "old", "new", draws=400,
                       seed=5)
    assert out is not None
    [(first, second, c)] = out.between
    assert (first, second) == ("human:alice", "human:bob")
    assert c.agreement is not None and c.unsure == 1
    # q1 and q2: 11 pairs both decided, 10 agree; alice 6/11 same, bob 7/11 same
    assert c.agreement.pairs == 11
    assert c.agreement.agreement == pytest.approx(100 * 10 / 11)
    assert c.agreement.kappa == pytest.approx(48 / 59)  # pe = 62/121
    assert c.agreement.partitions_identical == pytest.approx(50.0)
    assert c.d_questions == 1  # q2: both labelled it completely
    assert c.agreement.d_hat == {"human:alice": pytest.approx(100.0),
                                 "human:bob": pytest.approx(100.0)}
    assert out.to_json()["between"][0]["judges"] == ["human:alice", "human:bob"]


def test_no_human_label_gives_nothing() -> None:
    assert human_judges(_answers(), _primary(), "rule", {"human:x": []}, "old", "new",
                        draws=10, seed=1) is None
