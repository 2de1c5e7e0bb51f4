"""The review session: blind human labels through the ledger and change decisions."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import pytest

from snapaudit.errors import ConfigError, IntegrityError
from snapaudit.hashing import sha256_json, sha256_text
from snapaudit.run.after.review import Label, LabelItem, ReviewSession
from snapaudit.run.record.dirlock import DirLock
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.review_store import ReviewStore, check_decision_chain
from snapaudit.run.stages.judge_audit import audit_sample
from snapaudit.stats.normalize import normalize_nq
from tests.fakes.rag_service import planted_answer
from tests.helpers.ledger_view import query
from tests.helpers.review import copy_run


@pytest.fixture
def run(built_review_run: Path, tmp_path: Path) -> Path:
    return copy_run(built_review_run, tmp_path)


def _all(item: LabelItem, label: Label) -> dict[str, Label]:
    return dict.fromkeys(item.pairs, label)


def _qids(run: Path) -> list[str]:
    return [q["question_id"] for q in json.loads((run / "cohort.json").read_text())["questions"]]


def test_open_refuses_a_bad_annotator_and_an_unlocked_run(run: Path, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="annotator 'a b' may only use"):
        ReviewSession.open(run, "a b")
    with pytest.raises(ConfigError, match="at least 1 question, not 0"):
        ReviewSession.open(run, "alice", sample=0)
    bare = tmp_path / "bare"
    bare.mkdir()
    Ledger(bare / "ledger.sqlite").close()
    with pytest.raises(ConfigError, match="not locked yet"):
        ReviewSession.open(bare, "alice")


def test_label_items_are_the_blind_hash_sample(run: Path) -> None:
    with ReviewSession.open(run, "alice", sample=5) as s, \
            ReviewSession.open(run, "bob", sample=5) as t:
        items, other = s.label_items(), t.label_items()
    assert [i.question_id for i in items] == audit_sample(_qids(run), 5, seed=7)
    assert other == items  # the same items for every annotator
    for item in items:
        assert [a.item for a in item.answers] == ["A", "B", "C", "D"]
        assert item.pairs == ("A|B", "A|C", "A|D", "B|C", "B|D", "C|D")
        planted = sorted(planted_answer(item.question_id, s, r) for s in ("old", "new")
                         for r in (1, 2))
        assert sorted(a.text for a in item.answers) == planted
        assert item.saved is None
    with ReviewSession.open(run, "alice", sample=5) as again:
        assert again.label_items() == items  # stable across sessions


def test_labels_are_checked_pair_by_pair(run: Path) -> None:
    with ReviewSession.open(run, "alice", sample=3) as s:
        item = s.label_items()[0]
        full = _all(item, "same")
        with pytest.raises(ConfigError, match=re.escape("not labelled: C|D")):
            s.save_labels(item.question_id, dict(list(full.items())[:-1]))
        with pytest.raises(ConfigError, match=re.escape("unknown pair 'A|E'")):
            s.save_labels(item.question_id, {**full, "A|E": "same"})
        with pytest.raises(ConfigError, match=re.escape("pair A|B is labelled twice")):
            s.save_labels(item.question_id, {**full, "B|A": "different"})
        with pytest.raises(ConfigError, match="label 'maybe'"):
            s.save_labels(item.question_id, {**full, "A|B": "maybe"})  # type: ignore[dict-item]
        outside = next(q for q in _qids(run) if q not in {i.question_id for i in s.label_items()})
        with pytest.raises(ConfigError, match="not in the label sample"):
            s.save_labels(outside, full)
    assert query(run / "ledger.sqlite", "SELECT COUNT(*) FROM attempts WHERE stage LIKE "
                 "'human:%'") == [(0,)]


def test_labels_go_through_the_ledger_once_and_resume(run: Path) -> None:
    with ReviewSession.open(run, "alice", sample=3) as s:
        item = s.label_items()[0]
        labels: dict[str, Label] = {p: ("same" if i % 2 else "different")
                                    for i, p in enumerate(item.pairs)}
        labels["C|D"] = "unsure"
        saved = s.save_labels(item.question_id, labels)
        assert saved.saved == labels
        s.save_labels(item.question_id, dict(reversed(list(labels.items()))))  # a no-op
        with pytest.raises(IntegrityError, match="already accepted"):
            s.save_labels(item.question_id, _all(item, "same"))
    db = run / "ledger.sqlite"
    assert query(db, "SELECT cell_key, attempt_no, outcome FROM attempts WHERE "
                 "stage='human:alice'") == [(item.question_id, 1, "accepted")]
    with ReviewSession.open(run, "alice", sample=3) as again:
        first = again.label_items()[0]
        assert first.saved == labels and again.progress().labelled == 1
        again.finish_labels()
        assert again.progress().labels_locked
        second = again.label_items()[1]
        with pytest.raises(IntegrityError, match="locked"):
            again.save_labels(second.question_id, _all(second, "same"))
    payload = query(db, "SELECT payload FROM cells WHERE stage='human:alice'")[0][0]
    assert '"label":"unsure"' in payload and '"pair":"C|D"' in payload


def test_sessions_share_a_run_without_its_directory_lock(run: Path) -> None:
    lock = DirLock(run, "snapaudit report")
    lock.acquire()
    try:
        with ReviewSession.open(run, "alice", sample=2) as a, \
                ReviewSession.open(run, "bob", sample=2) as b, \
                ReviewSession.open(run, "alice", sample=2) as a2:
            item = a.label_items()[0]
            same = _all(item, "same")
            a.save_labels(item.question_id, same)
            a2.save_labels(item.question_id, same)  # the other session's accepted labels
            b.save_labels(item.question_id, _all(item, "different"))
            assert a2.label_items()[0].saved == same
            assert b.progress().labelled == 1
    finally:
        lock.release()


def _listed(run: Path) -> set[str]:
    return {q for q in _qids(run) if len({normalize_nq(planted_answer(q, s, r))
                                    for s in ("old", "new") for r in (1, 2)}) > 1}


def test_change_items_are_the_listed_questions_with_their_shown_hash(run: Path) -> None:
    with ReviewSession.open(run, "alice") as s:
        items = s.change_items()
        assert {c.question_id for c in items} == _listed(run) and len(items) >= 2
        for c in items:
            assert c.old == tuple(planted_answer(c.question_id, "old", r) for r in (1, 2))
            assert c.new == tuple(planted_answer(c.question_id, "new", r) for r in (1, 2))
            assert c.gold == (f"answer {c.question_id}",)
            question = f"what is item {int(c.question_id[1:])}?"
            body = {"version": "snapaudit/review-shown/v1", "question_id": c.question_id,
                    "question_sha256": sha256_text(question),
                    "old_state": "old", "new_state": "new", "old": list(c.old),
                    "new": list(c.new), "gold_sha256": sha256_json([f"answer {c.question_id}"])}
            assert c.shown_sha256 == sha256_json(body)
        assert s.progress().changed == len(items)


def test_decisions_are_checked_revised_and_kept(run: Path) -> None:
    with ReviewSession.open(run, "alice") as s, ReviewSession.open(run, "bob") as b:
        c = s.change_items()[0]
        with pytest.raises(IntegrityError, match="not what the run shows"):
            s.save_decision(c.question_id, "regression", "", "0" * 64)
        with pytest.raises(ConfigError, match="decision 'bad'"):
            s.save_decision(c.question_id, "bad", "", c.shown_sha256)  # type: ignore[arg-type]
        with pytest.raises(ConfigError, match="not a change"):
            s.save_decision("nope", "neutral", "", c.shown_sha256)
        first = s.save_decision(c.question_id, "regression", "worse", c.shown_sha256)
        assert first.decision is not None and first.decision.decision == "regression"
        s.save_decision(c.question_id, "neutral", "on second thought", c.shown_sha256)
        b.save_decision(c.question_id, "improvement", "", c.shown_sha256)
        now = {x.question_id: x for x in s.change_items()}[c.question_id].decision
        assert now is not None and (now.decision, now.note) == ("neutral", "on second thought")
        assert s.progress().reviewed == 1 and b.progress().reviewed == 1
    store = ReviewStore(run / "ledger.sqlite")
    try:
        rows = store.decisions()
    finally:
        store.close()
    assert [(r.annotator, r.decision) for r in rows] == [
        ("alice", "regression"), ("alice", "neutral"), ("bob", "improvement")]
    check_decision_chain(rows)
    with pytest.raises(IntegrityError, match="decision #2"):
        check_decision_chain([rows[0], rows[2]])
    with sqlite3.connect(run / "ledger.sqlite") as db, \
            pytest.raises(sqlite3.DatabaseError, match="append-only"):
        db.execute("UPDATE review_decisions SET decision='neutral'")


def test_a_decision_on_a_run_whose_locks_changed_is_refused(run: Path) -> None:
    with ReviewSession.open(run, "alice") as s:
        c = s.change_items()[0]
        with sqlite3.connect(run / "ledger.sqlite") as db:
            db.execute("DROP TRIGGER locks_no_update")
            db.execute("UPDATE locks SET record_hash='0' WHERE stage='semantic'")
        with pytest.raises(IntegrityError, match="semantic lock"):
            s.save_decision(c.question_id, "neutral", "", c.shown_sha256)


def test_the_review_lists_what_the_comparison_view_lists(run: Path) -> None:
    from snapaudit.report.comparison import comparison
    from snapaudit.report.load import load_run

    view = comparison(load_run(run))
    with ReviewSession.open(run, "alice") as s:
        assert [c.question_id for c in s.change_items()] == [r.id for r in view.rows]


_WRITER = """
import sys
from pathlib import Path
from snapaudit.run.after.review import ReviewSession
run, annotator = Path(sys.argv[1]), sys.argv[2]
with ReviewSession.open(run, annotator, sample=8) as s:
    items = s.change_items()
    for k in range(6):
        c = items[k % len(items)]
        s.save_decision(c.question_id, ("regression", "neutral")[k % 2], f"{annotator} {k}",
                        c.shown_sha256)
    for item in s.label_items():
        s.save_labels(item.question_id, dict.fromkeys(item.pairs, "same"))
"""


@pytest.mark.slow
def test_processes_write_reviews_at_once_and_lose_nothing(run: Path) -> None:
    import os
    import subprocess
    import sys

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(run), name], env=env)
             for name in ("p1", "p2", "p3")]
    assert [p.wait(timeout=120) for p in procs] == [0, 0, 0]
    store = ReviewStore(run / "ledger.sqlite")
    try:
        rows = store.decisions()
    finally:
        store.close()
    check_decision_chain(rows)  # one chain, whatever the interleaving
    assert sorted((r.annotator, r.note) for r in rows) == sorted(
        (name, f"{name} {k}") for name in ("p1", "p2", "p3") for k in range(6))
    n = len(audit_sample(_qids(run), 8, seed=7))
    for name in ("p1", "p2", "p3"):
        assert query(run / "ledger.sqlite", "SELECT COUNT(*) FROM cells WHERE stage=?",
                     (f"human:{name}",)) == [(n,)]


def test_groups_give_the_pair_labels_and_items_have_deep_links(run: Path) -> None:
    with ReviewSession.open(run, "alice", sample=3) as s:
        item = s.label_items()[0]
        with pytest.raises(ConfigError, match=re.escape("item(s) D in no group")):
            s.save_groups(item.question_id, [["A", "B"], ["C"]])
        with pytest.raises(ConfigError, match="item A is in two groups"):
            s.save_groups(item.question_id, [["A", "B"], ["A", "C", "D"]])
        saved = s.save_groups(item.question_id, [["A", "C"], ["B", "D"]])
        assert saved.saved == {"A|B": "different", "A|C": "same", "A|D": "different",
                               "B|C": "different", "B|D": "same", "C|D": "different"}
        assert s.label_item(item.question_id) == saved
        with pytest.raises(ConfigError, match="not in the label sample"):
            s.label_item("nope")
        change = s.change_items()[1]
        assert s.change_item(change.question_id) == change
        with pytest.raises(ConfigError, match="not a change"):
            s.change_item("nope")
