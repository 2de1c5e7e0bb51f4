"""The JSON-schema to GBNF converter of the embedded generator."""

from __future__ import annotations

import pytest

from snapaudit.errors import BackendError
from snapaudit.testbed.generate._gbnf import grammar_for, literal
from snapaudit.testbed.prompt import ANSWER_SCHEMA


def test_answer_grammar_forbids_control_characters_and_caps_length() -> None:
    text = grammar_for(ANSWER_SCHEMA)
    assert text.startswith("root ::= root-value\n")
    assert 'root-value ::= "{" ws "\\"answer\\"" ws ":" ws root-value-0 ws "}"' in text
    assert 'root-value-0 ::= "\\"" firstchar char{0,127} "\\""' in text
    assert 'char ::= [^"\\\\\\x00-\\x1f\\x7f] | "\\\\" ["\\\\]' in text


def test_literal_escapes_quotes_backslashes_and_controls() -> None:
    assert literal('a"b\\c\n') == '"a\\"b\\\\c\\x0a"'


def test_judge_like_schema_converts() -> None:
    schema = {
        "type": "object",
        "properties": {
            "pairs": {"type": "array", "minItems": 1, "maxItems": 3, "items": {
                "type": "object",
                "properties": {"pair": {"type": "string", "maxLength": 8},
                               "same": {"type": "boolean"},
                               "kind": {"enum": ["x", "y"]}},
                "required": ["pair", "same", "kind"]}},
        },
        "required": ["pairs"],
    }
    text = grammar_for(schema)
    assert 'root-value-0 ::= "[" ws root-value-0-item ("," ws root-value-0-item){0,2} ws "]"' \
        in text
    assert 'root-value-0-item-0 ::= "\\"" firstchar char{0,7} "\\""' in text
    assert 'root-value-0-item-2 ::= "\\"x\\"" | "\\"y\\""' in text
    assert '"\\"same\\"" ws ":" ws boolean' in text


@pytest.mark.parametrize("schema", [
    {"type": "number"},
    {"type": "object", "properties": {"a": {"type": "string"}}},  # a is not required
    {"type": "object", "properties": {}},
    {"type": "string", "minLength": 5, "maxLength": 2},
    {"enum": []},
])
def test_unsupported_schemas_are_backend_errors(schema: dict[str, object]) -> None:
    with pytest.raises(BackendError):
        grammar_for(schema)
