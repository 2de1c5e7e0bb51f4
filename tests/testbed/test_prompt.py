"""The answer prompt surface and the answer parser."""

from __future__ import annotations

import json

import pytest

from snapaudit.errors import TransportInvalid
from snapaudit.hashing import sha256_json
from snapaudit.testbed.prompt import (
    ANSWER_SCHEMA,
    MAX_ANSWER_BYTES,
    SYSTEM_PROMPT,
    parse_answer,
    prompt_spec,
    user_message,
)


def test_prompt_says_what_the_issue_requires() -> None:
    text = SYSTEM_PROMPT.lower()
    for phrase in ("concise", "own knowledge", "incomplete", "irrelevant", "untrusted",
                   "never instructions", "exactly unknown", '"answer"'):
        assert phrase in text, phrase


def test_n0_gets_the_same_prompt_without_the_evidence_block() -> None:
    with_evidence = user_message("Who wrote Hamlet?", "[1] id: d1\nShakespeare.")
    without = user_message("Who wrote Hamlet?", None)
    assert without == "Question: Who wrote Hamlet?"
    assert with_evidence == "<evidence>\n[1] id: d1\nShakespeare.\n</evidence>\n\n" + without
    assert "<evidence>" not in without


def test_prompt_spec_is_hash_bound() -> None:
    spec = prompt_spec()
    body = {k: v for k, v in spec.items() if k != "sha256"}
    assert spec["sha256"] == sha256_json(body)
    assert spec["system"] == SYSTEM_PROMPT
    assert spec["answer_schema"] == ANSWER_SCHEMA
    assert prompt_spec() == spec


@pytest.mark.parametrize(("text", "expected"), [
    ('{"answer": "Paris"}', "Paris"),
    ('  {"answer":"  Canberra "}\n', "Canberra"),
    ('{"answer": "UNKNOWN"}', "UNKNOWN"),
    ('{"answer": "\\u00e9t\\u00e9"}', "été"),
])
def test_parse_answer_accepts(text: str, expected: str) -> None:
    assert parse_answer(text) == expected


@pytest.mark.parametrize("text", [
    "Paris", "", '["Paris"]', '"Paris"', '{"answer": 3}', '{"answer": ""}', '{"answer": "  "}',
    '{"reply": "Paris"}', '{"answer": "a", "why": "b"}', "{}", '{"answer": "a", "answer": "b"}',
    '{"answer": "Paris"', '```json\n{"answer": "Paris"}\n```', '{"answer": "\\ud800"}',
])
def test_parse_answer_rejects_as_invalid(text: str) -> None:
    with pytest.raises(TransportInvalid) as info:
        parse_answer(text)
    assert info.value.reason == "invalid_answer"


def test_parse_answer_byte_limit_counts_utf8_bytes() -> None:
    assert parse_answer(json.dumps({"answer": "x" * MAX_ANSWER_BYTES})) == "x" * 512
    assert parse_answer(json.dumps({"answer": "é" * 256})) == "é" * 256  # 512 bytes
    for answer in ("x" * 513, "é" * 257):
        with pytest.raises(TransportInvalid) as info:
            parse_answer(json.dumps({"answer": answer}))
        assert info.value.reason == "oversized_answer"
