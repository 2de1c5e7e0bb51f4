"""Counterfactual evidence lists and the attribution verdict table, hand-computed."""

from __future__ import annotations

from snapaudit.stats.attribution import (
    CAUSED,
    NECESSARY_ONLY,
    NOT_EXPLAINED,
    SUFFICIENT_ONLY,
    THE_SET,
    Agreement,
    AttributionSection,
    attribute_question,
    attribution_table,
    counterfactual_lists,
    default_call_budget,
    entering,
    leaving,
    majority_agreement,
    necessity_list,
    set_in_list,
    set_out_list,
    sufficiency_list,
)

OLD = ("a", "b", "c", "d")
NEW = ("a", "x", "b", "y")

FWD, BACK, NONE = Agreement(False, True), Agreement(True, False), Agreement(True, True)


def test_entering_and_leaving_keep_their_rank_order() -> None:
    assert entering(OLD, NEW) == ("x", "y")
    assert leaving(OLD, NEW) == ("c", "d")


def test_sufficiency_inserts_at_the_new_rank_and_drops_the_lowest_leaving() -> None:
    assert sufficiency_list(OLD, NEW, "x") == ("a", "x", "b", "c")
    assert sufficiency_list(OLD, NEW, "y") == ("a", "b", "c", "y")


def test_necessity_replaces_by_the_highest_ranked_leaving() -> None:
    assert necessity_list(OLD, NEW, "x") == ("a", "c", "b", "y")
    assert necessity_list(OLD, NEW, "y") == ("a", "x", "b", "c")


def test_set_lists_swap_every_entering_document() -> None:
    assert set_in_list(OLD, NEW) == ("a", "x", "b", "y")
    assert set_out_list(OLD, NEW) == ("a", "c", "b", "d")


def test_single_entering_document_and_reordered_common_documents() -> None:
    old, new = ("a", "b", "c"), ("c", "e", "a")
    assert counterfactual_lists(old, new) == {"suff1": ("a", "e", "c"), "nec1": ("c", "b", "a")}


def test_no_leaving_document_and_no_change() -> None:
    assert counterfactual_lists(("a",), ("a", "e")) == {"suff1": ("a", "e"), "nec1": ("a",)}
    assert counterfactual_lists(OLD, OLD) == {}
    assert list(counterfactual_lists(OLD, NEW)) == ["suff1", "nec1", "suff2", "nec2", "set-in",
                                                    "set-out"]


def test_majority_agreement_is_strict() -> None:
    assert majority_agreement([True, True, False], [False, False, False]) == BACK
    assert majority_agreement([True, False], [True, True]) == FWD
    assert FWD.forward and not FWD.back and BACK.back and not NONE.forward and not NONE.back


def test_caused_needs_sufficient_and_necessary() -> None:
    q = attribute_question("q", True, OLD, NEW, {"suff1": [FWD] * 4, "nec1": [BACK] * 3 + [NONE],
                                             "suff2": [NONE] * 4, "nec2": [NONE] * 4})
    assert (q.verdict, q.caused, q.agreement) == (CAUSED, ("x",), 0.75)
    assert q.documents[0].rank == 2 and q.documents[1].caused is False


def test_sufficient_only_and_necessary_only() -> None:
    q = attribute_question("q", True, ("a", "b"), ("a", "e"),
                           {"suff1": [FWD, FWD, FWD, NONE], "nec1": [BACK, NONE, NONE, NONE]})
    assert (q.verdict, q.caused, q.agreement) == (SUFFICIENT_ONLY, (), 0.75)
    q = attribute_question("q", True, ("a", "b"), ("a", "e"),
                           {"suff1": [FWD, NONE], "nec1": [BACK, BACK]})
    assert (q.verdict, q.agreement) == (NECESSARY_ONLY, 1.0)


def test_the_set_when_no_document_alone() -> None:
    q = attribute_question("q", True, OLD, NEW, {"suff1": [NONE] * 2, "nec1": [NONE] * 2,
                                             "suff2": [NONE] * 2, "nec2": [NONE] * 2,
                                             "set-in": [FWD] * 2, "set-out": [BACK, BACK]})
    assert (q.verdict, q.caused, q.agreement) == (THE_SET, (), 1.0)


def test_not_explained_rests_on_the_strongest_effect_seen() -> None:
    q = attribute_question("q", False, ("a", "b"), ("a", "e"),
                           {"suff1": [FWD, NONE, NONE, NONE], "nec1": [NONE] * 4})
    assert (q.verdict, q.agreement) == (NOT_EXPLAINED, 0.75)
    unchanged = attribute_question("q", False, OLD, OLD, {})
    assert (unchanged.verdict, unchanged.agreement, unchanged.entering) == (NOT_EXPLAINED,
                                                                             None, ())


def test_table_counts_verdicts_and_lists_caused_ids() -> None:
    a = attribute_question("q1", True, ("a",), ("e",), {"suff1": [FWD], "nec1": [BACK]})
    b = attribute_question("q2", False, ("a",), ("a",), {})
    section = attribution_table([a, b], max_questions=50)
    table = section.to_json()
    assert AttributionSection.from_json(table) == section  # the section reads back
    assert table["max_questions"] == 50
    assert table["verdicts"][CAUSED] == 1 and table["verdicts"][NOT_EXPLAINED] == 1
    assert table["questions"]["q1"]["caused"] == ["e"]
    assert table["questions"]["q2"] == {**table["questions"]["q2"], "verdict": NOT_EXPLAINED,
                                        "caused": []}


def test_only_a_strict_flip_has_a_change_to_explain() -> None:
    outcomes = {"suff1": [FWD, FWD], "nec1": [BACK, BACK]}
    flip = attribute_question("q", True, ("a", "b"), ("a", "e"), outcomes)
    unstable = attribute_question("q", False, ("a", "b"), ("a", "e"), outcomes)
    assert (flip.verdict, flip.caused, flip.named) == (CAUSED, ("e",), ("e",))
    assert (unstable.verdict, unstable.caused, unstable.named) == (NOT_EXPLAINED, (), ())
    assert unstable.agreement == 0.0  # one minus the strongest share seen (1.0)
    assert unstable.to_json()["documents"][0]["caused"] is False


def test_named_documents_follow_the_verdict() -> None:
    suff = attribute_question("q", True, OLD, NEW, {"suff1": [NONE] * 2, "nec1": [BACK] * 2,
                                                    "suff2": [FWD] * 2, "nec2": [NONE] * 2})
    assert (suff.verdict, suff.caused, suff.named) == (SUFFICIENT_ONLY, (), ("y",))
    nec = attribute_question("q", True, OLD, NEW, {"suff1": [NONE] * 2, "nec1": [BACK] * 2,
                                                   "suff2": [NONE] * 2, "nec2": [NONE] * 2})
    assert (nec.verdict, nec.named) == (NECESSARY_ONLY, ("x",))
    row = nec.to_json()
    assert (row["named"], row["old"], row["new"]) == (["x"], list(OLD), list(NEW))


def test_the_default_budget_counts_judge_calls_and_never_refuses_under_the_cap() -> None:
    # NEW against OLD: 2 entering documents -> suff1, suff2, nec1, nec2, set-in, set-out
    assert default_call_budget([2], repeats=2, judged=True, cap=2000) == 24  # 4 x (2 + 1) x 2
    assert default_call_budget([2], repeats=2, judged=False, cap=2000) == 16
    assert default_call_budget([2, 1, 3], repeats=3, judged=True, cap=50) == 50
    for came in range(1, 9):
        old = tuple(f"o{i}" for i in range(8))
        new = tuple(f"n{i}" for i in range(came)) + old[: 8 - came]
        variants = len(counterfactual_lists(old, new))
        for repeats in (2, 3, 5):
            calls = variants * (repeats + 1)  # every variant answered and judged once
            assert calls <= default_call_budget([came], repeats, True, cap=10**6)
