"""The OpenAI- and Anthropic-compatible backends against the loopback fake server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from snapaudit.errors import BackendError, ConfigError, TransportInvalid
from snapaudit.testbed.generate.config import generator_config
from snapaudit.testbed.generate.registry import build_generator
from snapaudit.testbed.prompt import ANSWER_SCHEMA, parse_answer
from tests.fakes.llm_server import FakeLLMServer
from tests.testbed.generate.helpers import REQUEST, call, config_for

BACKENDS = ("openai", "anthropic")


@pytest.fixture(scope="module")
def server() -> Iterator[FakeLLMServer]:
    with FakeLLMServer(hang_s=5.0) as srv:
        yield srv


@pytest.fixture(autouse=True)
def _fresh(server: FakeLLMServer) -> None:
    server.calls.clear()


@pytest.mark.parametrize("backend", BACKENDS)
def test_success_parses_text_usage_and_latency(server: FakeLLMServer, backend: str) -> None:
    result = call(config_for(server, backend))
    assert parse_answer(result.text) == "Paris"
    assert result.usage == {"prompt_tokens": 12, "completion_tokens": 5}
    assert result.model == "fake-model"
    assert result.latency_s > 0
    assert result.meta["finish_reason"] in ("stop", "tool_use")
    assert len(server.calls) == 1


@pytest.mark.parametrize(("fault", "reason"), [
    ("429", "http_429"), ("500", "http_500"), ("503", "http_503"), ("timeout", "timeout"),
    ("drop", "connection"), ("malformed_json", "malformed_json"), ("bad_shape", "malformed_body"),
])
@pytest.mark.parametrize("backend", BACKENDS)
def test_transport_faults_are_transport_invalid(server: FakeLLMServer, backend: str,
                                                fault: str, reason: str) -> None:
    server.inject(fault)
    with pytest.raises(TransportInvalid) as info:
        call(config_for(server, backend, timeout_s=0.3))
    assert info.value.reason == reason
    assert info.value.retry_after == (7.0 if fault == "429" else None)
    # the next call succeeds: one fault, one failed attempt
    assert parse_answer(call(config_for(server, backend)).text) == "Paris"


@pytest.mark.parametrize(("fault", "reason"), [
    ("schema_violation", "invalid_answer"), ("oversized", "oversized_answer"),
    ("empty_answer", "invalid_answer"),
])
@pytest.mark.parametrize("backend", BACKENDS)
def test_bad_answers_are_rejected_by_parse_answer(server: FakeLLMServer, backend: str,
                                                  fault: str, reason: str) -> None:
    server.inject(fault)
    text = call(config_for(server, backend)).text
    with pytest.raises(TransportInvalid) as info:
        parse_answer(text)
    assert info.value.reason == reason


def test_plain_text_instead_of_json(server: FakeLLMServer) -> None:
    server.inject("not_json")
    with pytest.raises(TransportInvalid) as info:
        parse_answer(call(config_for(server, "openai")).text)
    assert info.value.reason == "invalid_answer"
    server.inject("not_json")  # the anthropic backend forces a tool: a text block is malformed
    with pytest.raises(TransportInvalid) as info:
        call(config_for(server, "anthropic"))
    assert info.value.reason == "malformed_body"


@pytest.mark.parametrize("backend", BACKENDS)
def test_unauthorized_is_a_backend_error_not_retried(server: FakeLLMServer, backend: str) -> None:
    server.inject("401")
    with pytest.raises(BackendError, match="HTTP 401"):
        call(config_for(server, backend))


def test_retry_after_is_surfaced_with_the_servers_value() -> None:
    with FakeLLMServer(retry_after="2.5") as srv:
        srv.inject("429")
        with pytest.raises(TransportInvalid) as info:
            call(config_for(srv, "openai"))
    assert info.value.retry_after == 2.5


def test_openai_sends_only_the_controls_the_protocol_sets(server: FakeLLMServer) -> None:
    result = call(config_for(server, "openai"))
    body = server.calls[-1].body
    assert "temperature" not in body and "top_p" not in body and "reasoning_effort" not in body
    assert body["seed"] == 1234
    assert body["max_tokens"] == 64
    assert body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "response", "strict": True, "schema": ANSWER_SCHEMA}}
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert result.meta["left_to_provider"] == ["temperature", "top_p"]

    result = call(config_for(server, "openai", temperature=0.7, top_p=0.9, seed_per_call=False,
                             reasoning_effort="low", response_format="json_object",
                             max_tokens_field="max_completion_tokens"))
    body = server.calls[-1].body
    assert (body["temperature"], body["top_p"], body["reasoning_effort"]) == (0.7, 0.9, "low")
    assert "seed" not in body and "max_tokens" not in body
    assert body["max_completion_tokens"] == 64
    assert body["response_format"] == {"type": "json_object"}
    assert result.meta["left_to_provider"] == ["seed"]

    call(config_for(server, "openai", response_format="none"))
    assert "response_format" not in server.calls[-1].body


def test_anthropic_forces_the_tool_and_records_the_missing_seed(server: FakeLLMServer) -> None:
    result = call(config_for(server, "anthropic", temperature=0.5))
    sent = server.calls[-1]
    assert sent.headers["anthropic-version"] == "2023-06-01"
    assert sent.body["system"] == REQUEST.system
    assert sent.body["messages"] == [{"role": "user", "content": REQUEST.user}]
    assert sent.body["tools"][0]["input_schema"] == ANSWER_SCHEMA
    assert sent.body["tool_choice"] == {"type": "tool", "name": sent.body["tools"][0]["name"]}
    assert sent.body["temperature"] == 0.5 and "top_p" not in sent.body and "seed" not in sent.body
    assert result.meta["left_to_provider"] == ["top_p", "seed"]

    result = call(config_for(server, "anthropic", response_format="none"))
    assert "tools" not in server.calls[-1].body
    assert result.text == '{"answer": "Paris"}'


def test_anthropic_refuses_reasoning_effort(server: FakeLLMServer) -> None:
    with pytest.raises(ConfigError, match="reasoning_effort"):
        build_generator(config_for(server, "anthropic", reasoning_effort="high"))


@pytest.mark.parametrize("backend", BACKENDS)
def test_connection_refused_is_transport_invalid(backend: str) -> None:
    with FakeLLMServer() as srv:
        config = config_for(srv, backend)
    with pytest.raises(TransportInvalid) as info:  # the server is gone
        call(config)
    assert info.value.reason == "connection"


def test_spec_names_endpoint_without_credentials() -> None:
    config = generator_config(backend="openai", model="m",
                             base_url="https://user:pw@example.test/v1/?key=abc")
    spec = build_generator(config).spec()
    assert spec["endpoint"] == "https://example.test/v1/chat/completions"
    assert spec["temperature"] is None and spec["model"] == "m"
