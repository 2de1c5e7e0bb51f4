"""Per-kind config unions keep the flat written shape: protocols written before the split
load, and their protocol hashes and resolved TOML are unchanged (hashes computed on the
code before the split)."""

from __future__ import annotations

import tomllib
from importlib.resources import files
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from snapaudit.demo.files import demo_protocol
from snapaudit.errors import ProtocolError
from snapaudit.run.dialect import resolve_offline
from snapaudit.run.record.protocol import load_protocol, parse_protocol, protocol_hash, to_toml
from snapaudit.testbed.generate.config import (
    LocalGeneratorConfig,
    OpenAIGeneratorConfig,
    generator_config,
)
from snapaudit.testbed.retrieval.config import Bm25RetrieverConfig, HttpRetrieverConfig

REPO = Path(__file__).resolve().parents[2]

# protocol hashes computed before generators and retrievers were split into per-kind models
EXAMPLE_HASH = "311d253556d2ad75e21d753edbf4e2dd834b97ebcabc015729d8a2bc48a75115"
TEMPLATE_HASHES = {"http": "eac88ff191401c6f5d3c63a0eea47429200a5b4d961c5a086ebc7898f6f08822",
                   "testbed": "f86021264aa3b8fddcf70a64c7bb635f4b4c6c2155cb8932fd846e7580cd5bff"}
# the demo: n_threads 2 -> 1 (one thread per replica, issue 42); [run] is not hashed
DEMO_HASH = "07e0d8650b7275c0958d4000b819f3139c871cf87c99bf39cf904dafce641593"
KINDS_HASH = "63ad0497cc9757aff93d5b2552d433bd87aaf8bc96ab31dfbc9da069a4dc092f"


def _kinds_protocol() -> dict[str, Any]:
    return {
        "name": "kinds", "states": {"order": ["a", "b"], "old": "a", "new": "b"},
        "cohort": {"source": "jsonl", "path": "q.jsonl", "size": 2},
        "gold": {"path": "g.jsonl"}, "system": {"kind": "testbed"},
        "testbed": {"corpus": "c", "states": {"a": 0, "b": 1},
                    "retriever": {"kind": "http", "url": "http://127.0.0.1:9/search",
                                  "method": "GET"}},
        "generator": {"backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1",
                      "max_tokens_field": "max_completion_tokens", "temperature": 0.0},
        "judge": {"kind": "llm", "name": "llm",
                  "generator": {"backend": "anthropic", "model": "j",
                                "anthropic_version": "2023-06-01"}},
    }


def test_example_protocol_hash_is_unchanged() -> None:
    protocol = load_protocol(REPO / "examples" / "python_system" / "audit.toml")
    assert protocol_hash(protocol) == EXAMPLE_HASH


@pytest.mark.parametrize("kind", sorted(TEMPLATE_HASHES))
def test_template_protocol_hashes_are_unchanged(kind: str) -> None:
    text = files("snapaudit.cli.templates").joinpath(f"{kind}.toml").read_text(encoding="utf-8")
    protocol = parse_protocol(tomllib.loads(text))
    if kind == "testbed":  # response_format = "auto": a run of the local backend resolves
        assert protocol.generator is not None  # it to json_schema without a probe
        assert protocol.generator.response_format == "auto"
        protocol = resolve_offline(protocol)
    assert protocol_hash(protocol) == TEMPLATE_HASHES[kind]


def test_demo_protocol_hash_is_unchanged() -> None:
    text = demo_protocol(Path("/demo-files"))
    assert protocol_hash(parse_protocol(tomllib.loads(text))) == DEMO_HASH


def test_every_kind_hashes_and_round_trips_as_before() -> None:
    protocol = parse_protocol(_kinds_protocol())
    assert protocol_hash(protocol) == KINDS_HASH
    assert isinstance(protocol.generator, OpenAIGeneratorConfig)
    assert isinstance(protocol.testbed and protocol.testbed.retriever, HttpRetrieverConfig)
    # the resolved TOML holds every kind's fields (at their defaults where unused) and loads
    text = to_toml(protocol)
    assert "n_ctx = 4096" in text and "k1 = 0.9" in text
    again = parse_protocol(tomllib.loads(text))
    assert again == protocol and protocol_hash(again) == KINDS_HASH


def test_a_kind_model_has_only_its_own_fields() -> None:
    openai = generator_config(backend="openai", model="m", n_threads=1)  # flat default: kept out
    assert isinstance(openai, OpenAIGeneratorConfig)
    assert "n_threads" not in type(openai).model_fields and not hasattr(openai, "n_threads")
    assert isinstance(generator_config(), LocalGeneratorConfig)  # no backend: local
    assert "url" not in Bm25RetrieverConfig.model_fields


def test_a_field_of_another_backend_is_refused_naming_it() -> None:
    with pytest.raises(ValidationError, match="'n_threads' is a field of backend = 'local', "
                                              "not of backend = 'openai'"):
        generator_config(backend="openai", n_threads=4)
    data = _kinds_protocol()
    data["judge"]["generator"]["max_tokens_field"] = "max_completion_tokens"
    with pytest.raises(ProtocolError) as err:
        parse_protocol(data)
    assert ("'judge.generator': 'max_tokens_field' is a field of backend = 'openai', "
            "not of backend = 'anthropic'") in str(err.value)
    data = _kinds_protocol()
    data["testbed"]["retriever"]["k1"] = 1.5
    with pytest.raises(ProtocolError, match="'k1' is a field of kind = 'bm25', not of "
                                            "kind = 'http'"):
        parse_protocol(data)


def test_an_unknown_backend_lists_the_backends() -> None:
    data = _kinds_protocol()
    data["generator"]["backend"] = "gemini"
    with pytest.raises(ProtocolError) as err:
        parse_protocol(data)
    assert ("'generator.backend': must be one of 'openai', 'anthropic' or 'local', "
            "got 'gemini'") in str(err.value)
