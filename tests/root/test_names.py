"""One name rule for everything that becomes part of a path: states, judges, judge specs."""

from __future__ import annotations

import tomllib
from typing import Any

import pytest

from snapaudit.errors import ConfigError, ProtocolError
from snapaudit.judge.spec import generator_name, parse_judge_spec
from snapaudit.names import is_name
from snapaudit.run.record.protocol import parse_protocol
from tests.fakes.rag_service import FakeRagService
from tests.helpers.protocol import protocol_text

BAD = ("../x", "/abs", "a\0b", "..", ".hidden", "-opt", "a/b", "a b", "x\n", "", "é", "a" * 129)


@pytest.mark.parametrize("name", BAD)
def test_bad_names_are_refused(name: str) -> None:
    assert not is_name(name)


@pytest.mark.parametrize("name", ["judge", "rule-minilm", "openai-gpt-4o_mini.2", "n0", "a" * 128])
def test_good_names_pass(name: str) -> None:
    assert is_name(name)


def _protocol() -> dict[str, Any]:
    data: dict[str, Any] = tomllib.loads(protocol_text(FakeRagService()))  # never started
    return data


@pytest.mark.parametrize("name", ["../x", "/abs", "a\0b", "..", "x\n"])
def test_judge_name_is_validated_at_protocol_load(name: str) -> None:
    data = _protocol()
    data["judge"] = {"kind": "rule", "name": name}
    with pytest.raises(ProtocolError, match=r"judge\.name"):
        parse_protocol(data)


@pytest.mark.parametrize("state", ["..", "x\n", ".a", "a/b"])
def test_state_names_follow_the_same_rule(state: str) -> None:
    data = _protocol()
    data["states"]["order"][1] = data["states"]["new"] = state
    data["systems"][state] = data["systems"].pop("new")
    with pytest.raises(ProtocolError, match="state name"):
        parse_protocol(data)


@pytest.mark.parametrize("spec", ["..=rule", "a\0b=rule", ".x=rule"])
def test_judge_spec_names_are_validated(spec: str) -> None:
    with pytest.raises(ConfigError, match="judge name"):
        parse_judge_spec(spec)


def test_generator_names_are_made_valid() -> None:
    from snapaudit.testbed.generate.config import generator_config

    name = generator_name(generator_config(backend="openai", model="org/My Model:7b"))
    assert name == "openai-org-My-Model-7b" and is_name(name)
