"""The cell-key codecs: every key type round-trips, including ids holding ``|`` and ``#``."""

from __future__ import annotations

import pytest

from snapaudit.run.stages.keys import (
    AnswerKey,
    AttributionJudgeKey,
    AttributionKey,
    JudgeKey,
    RetrievalKey,
    endpoint_of,
)

IDS = ["q1", "a|b", "a|b|c", "x#1/2", "#", "|", "q#2/3|old|1", "wh|at#is/it"]


@pytest.mark.parametrize("qid", IDS)
def test_answer_keys_round_trip(qid: str) -> None:
    key = AnswerKey(qid, "new", 2)
    assert key.encode() == f"{qid}|new|2"  # the stored string is unchanged
    assert AnswerKey.decode(key.encode()) == key
    assert endpoint_of("answer", key.encode()) == "new"


@pytest.mark.parametrize("qid", IDS)
def test_retrieval_keys_round_trip(qid: str) -> None:
    key = RetrievalKey(qid, "old", 1)
    assert key.encode() == f"{qid}|old|p1"
    assert key.pair() == f"{qid}|old"
    assert RetrievalKey.decode(key.encode()) == key
    assert endpoint_of("retrieval", key.encode()) == "old"


@pytest.mark.parametrize("qid", IDS)
def test_judge_keys_round_trip(qid: str) -> None:
    whole = JudgeKey(qid)
    assert whole.encode() == qid and not whole.split
    assert JudgeKey.decode(whole.encode()) == whole  # a whole packet's payload names no id
    part = JudgeKey(qid, 2, 3)
    assert part.encode() == f"{qid}#2/3" and part.split
    assert JudgeKey.decode(part.encode(), qid) == part  # a split packet's payload names it
    assert endpoint_of("judge:j", part.encode()) == "judge:j"


@pytest.mark.parametrize("qid", IDS)
def test_attribution_keys_round_trip(qid: str) -> None:
    key = AttributionKey(qid, "suff1", 2)
    assert key.encode() == f"{qid}|suff1|2"  # the strings attribution stored before
    assert AttributionKey.decode(key.encode()) == key
    packet = AttributionJudgeKey(qid, "set-out")
    assert packet.encode() == f"{qid}|set-out" and not packet.split
    assert AttributionJudgeKey.decode(packet.encode()) == packet
    assert key.fields() == {"question_id": qid, "variant": "suff1", "repeat": 2}
    assert endpoint_of("attribution", key.encode()) == "attribution"


def test_malformed_keys_are_refused() -> None:
    for text in ["q1", "q1|old", "q1|old|x", "q1|old|p1"]:
        with pytest.raises(ValueError):
            AnswerKey.decode(text)
    for text in ["q1|old", "q1|old|1", "q1|old|px"]:
        with pytest.raises(ValueError):
            RetrievalKey.decode(text)
    for text, named in [("q1", "q1"), ("q2#1/2", "q1"), ("q1#1", "q1"), ("q1#a/2", "q1")]:
        with pytest.raises(ValueError):
            JudgeKey.decode(text, named)
    for text in ["q1", "q1|suff1|x", "q1|suff1"]:
        with pytest.raises(ValueError):
            AttributionKey.decode(text)
    with pytest.raises(ValueError):
        AttributionJudgeKey.decode("q1")
    assert endpoint_of("answer", "no key") == "answer"  # unparseable: the stage


def test_every_cell_names_the_endpoint_its_stored_key_gives_back() -> None:
    """The executor paces per the endpoint a cell names; status reads the same endpoint back
    from the stored key (endpoint_of): answers and retrievals per state, judges per stage."""
    from typing import Any, cast

    from snapaudit.judge.config import JudgeConfig
    from snapaudit.judge.rule import RuleJudge
    from snapaudit.run.record.cohort import Question
    from snapaudit.run.stages.answer import answer_cells
    from snapaudit.run.stages.judge import judge_cells
    from snapaudit.run.stages.retrieval import retrieval_cell
    from snapaudit.tables import AnswerRef

    system = cast(Any, object())  # building a cell calls nothing
    named = [("answer", c.key.encode(), c.endpoint) for c in answer_cells(
        {"old": system, "new": system}, {"a|b": "?", "q2": "?"}, ["old", "new"], 2, {}, 512)]
    named += [("retrieval", c.key.encode(), c.endpoint) for c in (
        retrieval_cell(system, Question("a|b", "?"), s, p) for s in ("old", "new") for p in (1, 2))]
    judge = RuleJudge(JudgeConfig(kind="rule", name="j"))
    named += [("judge:j", c.key.encode(), c.endpoint) for c in judge_cells(
        judge, "a|b", "?", [(AnswerRef("old", 1), "x"), (AnswerRef("new", 1), "y")], 0)]
    assert len(named) == 8 + 4 + 1
    assert all((endpoint or stage) == endpoint_of(stage, key) for stage, key, endpoint in named)
    assert {e for s, _, e in named if s != "judge:j"} == {"old", "new"}
