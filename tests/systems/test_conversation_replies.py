"""A conversation's replies: one answer per turn, the last the final answer; a wrong count,
a missing or an unasked ``turn_answers`` is one schema failure (retried like a malformed
step); the HTTP body carries the turns."""

from __future__ import annotations

from typing import Any

import pytest

from snapaudit.errors import TransportInvalid
from snapaudit.systems.http import request_body
from snapaudit.systems.python import to_outcome

TURNS = ("hello", "and then?")


def test_turn_answers_give_the_final_answer() -> None:
    out = to_outcome({"turn_answers": ["a", "b"]}, 0.0, TURNS)
    assert (out.answer, out.turn_answers) == ("b", ("a", "b"))
    out = to_outcome({"answer": "b", "turn_answers": ["a", "b"]}, 0.0, TURNS)
    assert (out.answer, out.turn_answers) == ("b", ("a", "b"))
    single = to_outcome({"answer": "x"}, 0.0)
    assert (single.answer, single.turn_answers) == ("x", None)


@pytest.mark.parametrize(("value", "turns", "detail"), [
    ({"turn_answers": ["a"]}, TURNS, "'turn_answers' has 1 answer(s) for 2 turn(s)"),
    ({"turn_answers": ["a", "b", "c"]}, TURNS, "has 3 answer(s) for 2 turn(s)"),
    ({"answer": "c", "turn_answers": ["a", "b"]}, TURNS, "'answer' must equal the last"),
    ({"answer": "b"}, TURNS, "no 'turn_answers' in the reply to a conversation of 2 turn(s)"),
    ("b", TURNS, "no 'turn_answers' in the reply to a conversation"),
    ({"turn_answers": ["a", ""]}, TURNS, "turn_answers[1] is blank"),
    ({"turn_answers": "ab"}, TURNS, "'turn_answers' must be a list of strings, got str"),
    ({"turn_answers": ["a"]}, None, "'turn_answers' in the reply to a single-turn question"),
    ({}, TURNS, "expected {answer: str"),
])
def test_a_bad_reply_is_one_schema_failure(value: Any, turns: tuple[str, ...] | None,
                                           detail: str) -> None:
    with pytest.raises(TransportInvalid) as err:
        to_outcome(value, 0.0, turns)
    assert err.value.reason == "schema" and detail in str(err.value)
    assert "\n" not in str(err.value)


def test_the_http_body_carries_the_turns() -> None:
    template, values = {"q": "{question}"}, {"question": "hello"}
    assert request_body(template, values, None, TURNS) == {"q": "hello", "turns": list(TURNS)}
    assert request_body(template, values, None, None) == {"q": "hello"}  # a single question
    placed = {"input": {"q": "{question}", "history": "{turns}"}}
    assert request_body(placed, values, None, TURNS) == {"input": {"q": "hello",
                                                                   "history": list(TURNS)}}
    assert request_body(placed, values, None, None) == {"input": {"q": "hello",
                                                                  "history": None}}
