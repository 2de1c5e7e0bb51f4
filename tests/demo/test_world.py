"""The demo world: deterministic, planted as documented, placed in the intended shards."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snapaudit.demo.files import read_plants, write_world
from snapaudit.demo.simulate import rule_labels, simulate_answers
from snapaudit.demo.world import PLANT_KINDS, build_world
from snapaudit.run.record.protocol import load_protocol
from snapaudit.testbed.corpus.build import shard_of


def test_same_seed_same_world_other_seed_other_world() -> None:
    a, b, c = build_world(24, 7), build_world(24, 7), build_world(24, 8)
    assert a.docs == b.docs and a.questions == b.questions and a.plants == b.plants
    assert a.docs != c.docs


def test_files_are_byte_identical(tmp_path: Path) -> None:
    first = write_world(build_world(24, 7), tmp_path / "a")
    second = write_world(build_world(24, 7), tmp_path / "b")
    for name in ("corpus.jsonl", "questions.jsonl", "gold.jsonl", "plants.json"):
        assert (first.root / name).read_bytes() == (second.root / name).read_bytes()


def test_documents_land_in_their_planned_shards() -> None:
    world = build_world(30, 11)
    for doc in world.docs:
        assert shard_of(doc["id"], 11, 7) + 1 == world.doc_shards[doc["id"]]
    assert len({d["id"] for d in world.docs}) == len(world.docs)
    assert all(len(d["text"]) < 160 for d in world.docs)  # short: the local model is slow


def test_every_plant_kind_is_present_and_planted_as_documented() -> None:
    world = build_world(24, 7)
    kinds = {p["kind"] for p in world.plants.values()}
    assert kinds == set(PLANT_KINDS) and len(world.questions) == 24
    gold = {g["question_id"]: g["answers"] for g in world.gold}
    for qid, plant in world.plants.items():
        shards = plant["shards"]
        assert isinstance(shards, list)
        if plant["kind"] in ("stable", "distractor", "regression", "second_reading"):
            assert shards[0] == 1
        if plant["kind"] == "stable":
            assert shards == [1]
        if plant["kind"] == "recovery":
            assert min(shards) >= 2
        if plant["kind"] == "regression":
            assert min(shards[1:]) >= 4 and plant["planted_answer"] not in gold[qid]
        if plant["kind"] == "second_reading":
            assert plant["second_answer"] in gold[qid] and shards[1] >= 4
        if plant["kind"] == "distractor":
            assert min(shards[1:]) >= 2


def test_protocol_validates_and_plants_read_back(tmp_path: Path) -> None:
    files = write_world(build_world(10, 3), tmp_path)
    protocol = load_protocol(files.protocol)
    assert protocol.states.order == ["n0", "n1", "n3", "n7"]
    assert (protocol.states.old, protocol.states.new) == ("n1", "n7")
    assert protocol.testbed is not None and protocol.testbed.states["n7"] == 7
    assert protocol.judge.kind == "rule" and protocol.cohort.size == 10
    plants = read_plants(files.plants)
    assert set(plants) == {q["id"] for q in map(json.loads, files.questions.read_text()
                                                .splitlines())}


def test_simulation_follows_the_plants() -> None:
    world = build_world(10, 5)
    rows = {(r.question_id, r.state, r.repeat): r.answer
            for r in simulate_answers(world, seed=0, noise=0.0)}
    gold = {g["question_id"]: g["answers"] for g in world.gold}
    for qid, plant in world.plants.items():
        assert rows[(qid, "n0", 1)] == "UNKNOWN"
        if plant["kind"] == "regression":
            assert rows[(qid, "n1", 1)] == gold[qid][0]  # type: ignore[index]
            assert rows[(qid, "n7", 2)] == plant["planted_answer"]
        if plant["kind"] == "stable":
            assert rows[(qid, "n1", 1)] == rows[(qid, "n7", 2)] == gold[qid][0]  # type: ignore[index]
    labels = rule_labels(simulate_answers(world, seed=0, noise=0.0))
    assert len(labels) == 10 * 28  # 8 answers per question, all pairs


def test_demo_refuses_an_out_dir_holding_another_world(tmp_path: Path) -> None:

    from snapaudit.demo.run import DemoConfig, prepare_world
    from snapaudit.errors import ConfigError
    from snapaudit.progress import SilentProgress

    prepare_world(DemoConfig(tmp_path, questions=6, seed=1), SilentProgress())
    before = (tmp_path / "world" / "questions.jsonl").read_bytes()
    with pytest.raises(ConfigError, match="another --questions/--seed"):
        prepare_world(DemoConfig(tmp_path, questions=7, seed=1), SilentProgress())
    assert (tmp_path / "world" / "questions.jsonl").read_bytes() == before
    files = prepare_world(DemoConfig(tmp_path, questions=6, seed=1), SilentProgress())
    assert (files.root / "corpus").is_dir()


@pytest.mark.parametrize(("n_questions", "seed"), [(16, 7), (16, 11), (32, 3)])
def test_a_question_shares_no_search_word_with_another_questions_documents(
        n_questions: int, seed: int) -> None:
    """BM25 drops stopwords, so a question retrieves only its own plant's documents: no
    question shares a topic wording with another (the world's ``stable`` label stays true)."""
    from snapaudit.testbed.retrieval.tokenize import tokenize

    world = build_world(n_questions, seed)
    topics = [p["topic"] for p in world.plants.values()]
    assert len(set(topics)) == len(topics)
    for question in world.questions:
        own = set(world.plants[question["id"]]["doc_ids"])  # type: ignore[arg-type]
        words = set(tokenize(question["question"]))
        hits = {d["id"] for d in world.docs if words & set(tokenize(d["text"]))}
        assert hits == own, question
