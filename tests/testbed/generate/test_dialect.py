"""``response_format = "auto"``: the preflight probe against a loopback server that accepts
only some dialects, the dialect bound in the resolved protocol, no probe on resume; and the
server's own message first in a refusal's excerpt."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from snapaudit.errors import BackendError, ProtocolMismatchError, TransportInvalid
from snapaudit.progress import SilentProgress
from snapaudit.run.dialect import dry_run_notes
from snapaudit.run.engine import run_protocol_file
from snapaudit.run.record.protocol import load_protocol
from snapaudit.systems.redact import body_excerpt
from snapaudit.testbed.dialect import PROBE_QUESTION, probe_dialect
from snapaudit.testbed.generate.config import OpenAIGeneratorConfig
from tests.fakes.llm_server import FakeLLMServer, LLMCall, dialect_of
from tests.helpers.protocol import write_testbed_protocol, write_testbed_world
from tests.testbed.generate.helpers import REQUEST, call, config_for

LLAMA_ERROR = json.dumps({"error": {"message": "1 validation error:\n  {'type': "
                                    "'literal_error', 'loc': ('body', 'response_format', "
                                    "'type'), 'msg': \"Input should be 'text' or "
                                    "'json_object'\"}", "type": "internal_server_error"}})


def _probe(server: FakeLLMServer) -> str:
    config = config_for(server, "openai")
    assert isinstance(config, OpenAIGeneratorConfig)
    return asyncio.run(probe_dialect(config))


def _dialects(server: FakeLLMServer) -> list[str]:
    return [dialect_of(c.body) for c in server.calls]


def test_probe_takes_the_first_dialect_the_server_accepts() -> None:
    with FakeLLMServer(accepts=frozenset({"json_object_schema", "text"})) as srv:
        assert _probe(srv) == "json_object_schema"
    assert _dialects(srv) == ["json_schema", "json_object_schema"]


def test_probe_skips_a_dialect_accepted_but_not_honoured() -> None:
    with FakeLLMServer(honours=frozenset({"guided_json"})) as srv:
        assert _probe(srv) == "guided_json"
    assert _dialects(srv) == ["json_schema", "json_object_schema", "guided_json"]


def test_probe_falls_back_to_text_with_the_bare_answer_parser() -> None:
    with FakeLLMServer(honours=frozenset()) as srv:
        assert _probe(srv) == "text"
    assert _dialects(srv)[-1] == "text" and len(srv.calls) == 5


def test_probe_that_nothing_honours_names_every_dialect() -> None:
    with FakeLLMServer(accepts=frozenset()) as srv, pytest.raises(BackendError) as err:
        _probe(srv)
    assert "honoured no response_format dialect" in str(err.value)
    assert "json_object_schema:" in str(err.value) and "Input should be" in str(err.value)


def test_refusal_excerpt_shows_the_server_message_first_and_the_fix() -> None:
    excerpt = body_excerpt(LLAMA_ERROR.encode())
    assert excerpt.startswith("server says '1 validation error: {'type': 'literal_error'")
    assert "Input should be 'text' or 'json_object'" in excerpt
    assert excerpt.endswith("bytes, sha256 " + excerpt.split("sha256 ")[1])
    assert body_excerpt(b'{"detail": "sk-abcdef1234567890XYZ is bad"}').startswith(
        "server says '[REDACTED] is bad'; ")
    assert body_excerpt(b"plain").startswith("5 bytes, sha256 ")
    with FakeLLMServer(accepts=frozenset({"json_object_schema"})) as srv, \
            pytest.raises(TransportInvalid) as exc:
        call(config_for(srv, "openai"), REQUEST)
    assert exc.value.body.startswith("server says '1 validation error:")
    assert 'generator.response_format = "json_object_schema"' in exc.value.body
    assert '"auto"' in exc.value.body


def _responder(call: LLMCall) -> str:
    return json.dumps({"answer": "Paris" if PROBE_QUESTION in call.user else "ans-0-0"})


def test_auto_is_probed_once_recorded_and_never_probed_on_resume(tmp_path: Path) -> None:
    corpus = write_testbed_world(tmp_path)
    with FakeLLMServer(responder=_responder,
                       accepts=frozenset({"json_object_schema", "text"})) as srv:
        generator = (f'backend = "openai"\nmodel = "m"\nbase_url = "{srv.openai_base_url}"\n'
                     'response_format = "auto"')
        proto = write_testbed_protocol(tmp_path, corpus, generator, size=3)
        assert "probes" in dry_run_notes(load_protocol(proto))[0]
        run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
        probes = [c for c in srv.calls if PROBE_QUESTION in c.user]
        answers = [c for c in srv.calls if PROBE_QUESTION not in c.user]
        assert [dialect_of(c.body) for c in probes] == ["json_schema", "json_object_schema"]
        assert {dialect_of(c.body) for c in answers} == {"json_object_schema"}
        assert len(answers) == 3 * 3 * 2
        resolved = load_protocol(tmp_path / "run" / "protocol.resolved.toml")
        assert resolved.generator is not None
        assert resolved.generator.response_format == "json_object_schema"
        before = len(srv.calls)
        run_protocol_file(proto, tmp_path / "run", [], SilentProgress())  # the resume
        assert len(srv.calls) == before
        with pytest.raises(ProtocolMismatchError):  # the recorded dialect is bound
            run_protocol_file(proto, tmp_path / "run", ["generator.response_format=text"],
                              SilentProgress())


def test_json_object_schema_caps_unbounded_strings_like_the_local_grammar() -> None:
    from snapaudit.testbed.generate._gbnf import MAX_STRING_CHARS
    from snapaudit.testbed.generate.openai import structured_output
    from snapaudit.testbed.prompt import ANSWER_SCHEMA

    sent = structured_output("json_object_schema", ANSWER_SCHEMA)["response_format"]["schema"]
    assert sent["properties"]["answer"] == {"type": "string", "minLength": 1,
                                            "maxLength": MAX_STRING_CHARS}
    assert ANSWER_SCHEMA["properties"]["answer"] == {"type": "string"}  # not mutated
    kept = {"type": "string", "maxLength": 5, "enum": ["a"]}
    assert structured_output("json_object_schema", kept)["response_format"]["schema"] == kept
    assert structured_output("json_schema", ANSWER_SCHEMA)["response_format"][
        "json_schema"]["schema"] is ANSWER_SCHEMA  # other dialects send the schema as is


def test_a_refused_dialect_stops_the_run_with_the_server_words_and_the_fix(
        tmp_path: Path) -> None:
    from snapaudit.errors import SnapauditError

    corpus = write_testbed_world(tmp_path)
    with FakeLLMServer(accepts=frozenset({"json_object_schema"})) as srv:
        generator = (f'backend = "openai"\nmodel = "m"\nbase_url = "{srv.openai_base_url}"\n'
                     'response_format = "json_schema"')
        proto = write_testbed_protocol(tmp_path, corpus, generator, size=3)
        with pytest.raises(SnapauditError) as err:
            run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
    message = str(err.value)
    assert "server says '1 validation error:" in message
    assert "Input should be 'text' or 'json_object'" in message
    assert 'set generator.response_format = "json_object_schema"' in message
