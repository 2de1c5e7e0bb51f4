"""The review in results.json: judges.human and review, from a re-analysed run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snapaudit.progress import SilentProgress
from snapaudit.results import read_results
from snapaudit.run.after.review import Label, LabelItem, ReviewSession
from snapaudit.run.engine import reanalyze
from snapaudit.stats.normalize import normalize_nq
from tests.helpers.review import copy_run


@pytest.fixture
def run(built_review_run: Path, tmp_path: Path) -> Path:
    return copy_run(built_review_run, tmp_path)


def _by_text(item: LabelItem) -> dict[str, Label]:
    text = {a.item: normalize_nq(a.text) for a in item.answers}
    return {p: "same" if text[p[0]] == text[p[2]] else "different" for p in item.pairs}


def test_results_gain_human_judges_and_the_review(run: Path) -> None:
    before = json.loads((run / "results.json").read_text())
    assert "review" not in before and "human" not in (before["judges"] or {})
    with ReviewSession.open(run, "alice", sample=4) as a, \
            ReviewSession.open(run, "bob", sample=4) as b:
        items = a.label_items()
        for item in items:
            a.save_labels(item.question_id, _by_text(item))
            b.save_labels(item.question_id, dict.fromkeys(item.pairs, "same"))
        a.finish_labels()
        b.finish_labels()
        changes = a.change_items()
        first, second = changes[0], changes[1]
        a.save_decision(first.question_id, "regression", "worse", first.shown_sha256)
        b.save_decision(first.question_id, "neutral", "", first.shown_sha256)
        a.save_decision(second.question_id, "improvement", "", second.shown_sha256)
        b.save_decision(second.question_id, "neutral", "", second.shown_sha256)
        b.save_decision(second.question_id, "improvement", "agreed", second.shown_sha256)
    out = reanalyze(run, SilentProgress()).results
    review = out["review"]
    assert (review["reviewed"], review["changed"]) == (2, len(changes))
    assert (review["regressions"], review["improvements"], review["neutral"],
            review["unclear"]) == (1, 1, 0, 0)
    assert review["by_annotator"]["bob"] == {"reviewed": 2, "regressions": 0,
                                             "improvements": 1, "neutral": 1, "unclear": 0}
    assert review["regressions_list"] == [{"question_id": first.question_id,
                                           "annotator": "alice", "note": "worse",
                                           "at": review["regressions_list"][0]["at"]}]
    assert review["decisions"] == 5
    human = out["judges"]["human"]
    assert human["primary"] == "rule" and sorted(human["judges"]) == ["human:alice",
                                                                      "human:bob"]
    alice = human["judges"]["human:alice"]
    assert (alice["questions"], alice["pairs"], alice["unsure"]) == (4, 24, 0)
    # the rule judge calls two answers the same when their normalized texts match: alice too
    assert alice["vs_primary"]["agreement"] == pytest.approx(100.0)
    assert alice["vs_primary"]["kappa"] == pytest.approx(1.0)
    same = sum(lab == "same" for item in items for lab in _by_text(item).values())
    bob = human["judges"]["human:bob"]["vs_primary"]
    assert bob["agreement"] == pytest.approx(100 * same / 24)
    d = alice["vs_primary"]["d_hat"]
    assert d["human:alice"] == pytest.approx(d["rule"])
    [between] = human["between"]
    assert between["judges"] == ["human:alice", "human:bob"]
    assert between["agreement"] == pytest.approx(100 * same / 24)
    assert read_results(run / "results.json").to_json() == out  # the document round-trips


def test_unfinished_labels_stay_out_of_the_results(run: Path) -> None:
    before = json.loads((run / "results.json").read_text())
    with ReviewSession.open(run, "carol", sample=2) as s:
        item = s.label_items()[0]
        s.save_labels(item.question_id, dict.fromkeys(item.pairs, "same"))
    out = reanalyze(run, SilentProgress()).results
    assert out == before and "review" not in out and "human" not in (out["judges"] or {})


def test_a_save_killed_mid_way_keeps_the_lock_valid(run: Path) -> None:
    from snapaudit.run.record.ledger import Ledger

    with ReviewSession.open(run, "alice", sample=3) as s:
        first, second = s.label_items()[:2]
        s.save_labels(first.question_id, dict.fromkeys(first.pairs, "same"))
        with Ledger(run / "ledger.sqlite") as ledger:  # a save killed after its attempt row
            ledger.begin_attempt("human:alice", second.question_id, "0" * 64)
        s.finish_labels()
    out = reanalyze(run, SilentProgress()).results  # marks that attempt interrupted
    assert out["judges"]["human"]["judges"]["human:alice"]["questions"] == 1
    with ReviewSession.open(run, "alice", sample=3) as again:
        assert again.label_items()[0].saved == dict.fromkeys(first.pairs, "same")
