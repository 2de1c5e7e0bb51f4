"""A real OpenAI-compatible server nobody here wrote: ``python -m llama_cpp.server`` on the
embedded SmolLM2, driven through the openai backend to a finished report; and the body each
structured-output dialect sends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snapaudit.progress import SilentProgress
from snapaudit.run.engine import run_protocol_file
from snapaudit.testbed.generate.config import generator_config
from snapaudit.testbed.generate.llama_server import LlamaServer, server_available
from snapaudit.testbed.generate.openai import OpenAIGenerator, structured_output
from snapaudit.testbed.prompt import ANSWER_SCHEMA, parse_bare_answer
from tests.helpers.ledger_view import query
from tests.helpers.protocol import write_testbed_protocol, write_testbed_world

SCHEMA = {"type": "object"}


def test_each_dialect_sends_its_own_fields() -> None:
    strict = {"name": "response", "strict": True, "schema": SCHEMA}
    assert structured_output("json_schema", SCHEMA) == {
        "response_format": {"type": "json_schema", "json_schema": strict}}
    assert structured_output("json_object", SCHEMA) == {"response_format": {"type": "json_object"}}
    assert structured_output("json_object_schema", SCHEMA) == {
        "response_format": {"type": "json_object", "schema": SCHEMA}}
    assert structured_output("guided_json", SCHEMA) == {"guided_json": SCHEMA}
    assert structured_output("ollama_format", SCHEMA) == {"format": SCHEMA}
    assert structured_output("text", SCHEMA) == {} == structured_output("none", SCHEMA)
    body = OpenAIGenerator(generator_config(backend="openai", base_url="http://127.0.0.1:9/v1",
                                           response_format="guided_json")).request_body(
        __import__("tests.testbed.generate.helpers", fromlist=["REQUEST"]).REQUEST)
    assert body["guided_json"] == ANSWER_SCHEMA and "response_format" not in body


@pytest.mark.parametrize(("text", "answer"), [
    ("Paris", "Paris"),
    ("The capital of France is Paris.\nMore text", "The capital of France is Paris."),
    ('Answer: "Paris"', "Paris"), ('{"answer": "Paris"}', "Paris"), ("```\nParis\n```", "Paris"),
    ('{"answer": {"name": "Paris"}}', '{"answer": {"name": "Paris"}}')])
def test_plain_text_fallback_parses_a_bare_answer(text: str, answer: str) -> None:
    assert parse_bare_answer(text) == answer


@pytest.mark.slow
def test_testbed_audit_through_llama_cpp_server_to_a_finished_report(
        tmp_path: Path, smollm2_path: Path) -> None:
    problem = server_available()
    if problem:
        pytest.skip(problem)
    corpus = write_testbed_world(tmp_path)
    with LlamaServer(smollm2_path) as server:
        generator = (f'backend = "openai"\nmodel = "smollm2"\nbase_url = "{server.base_url}"\n'
                     'response_format = "json_object_schema"\ntemperature = 0.0\n'
                     "max_tokens = 48\ntimeout_s = 120.0")
        proto = write_testbed_protocol(tmp_path, corpus, generator, top_k=1, size=3,
                               states="n1 = 1, n3 = 3", run_timeout_s=120.0)
        out = run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
    db = tmp_path / "run" / "ledger.sqlite"
    outcomes = dict(query(db, "SELECT outcome, COUNT(*) FROM attempts WHERE stage='answer' "
                              "GROUP BY outcome"))
    assert outcomes.get("accepted") == 3 * 2 * 2
    assert outcomes.get("transport_invalid", 0) <= 2  # the schema keeps SmolLM2 on one key
    assert "exact" in out.results["kernels"]
    from snapaudit.report.build import write_report

    paths = write_report(tmp_path / "run")
    assert "Snapshot Compatibility Audit" in Path(paths.html).read_text()
    rows = [json.loads(r) for r in (tmp_path / "run" / "tables" / "answers.jsonl").read_text()
            .splitlines()]
    assert all(r["answer"].strip() for r in rows)


def _template_generator(base_url: str) -> str:
    """The testbed template's [generator] with only backend, model and URL set (what
    ``snapaudit init --kind testbed`` gives a team serving its model itself)."""
    import tomllib
    from importlib.resources import files

    text = files("snapaudit.cli.templates").joinpath("testbed.toml").read_text("utf-8")
    table = tomllib.loads(text)["generator"]
    table.pop("n_threads")  # a field of the local backend only
    table.update(backend="openai", model="smollm2", base_url=base_url)
    assert table["response_format"] == "auto"
    return "\n".join(f"{k} = {json.dumps(v)}" for k, v in table.items())


@pytest.mark.slow
def test_template_defaults_against_llama_cpp_server_probe_and_finish(
        tmp_path: Path, smollm2_path: Path) -> None:
    problem = server_available()
    if problem:
        pytest.skip(problem)
    corpus = write_testbed_world(tmp_path)
    with LlamaServer(smollm2_path) as server:
        proto = write_testbed_protocol(tmp_path, corpus, _template_generator(server.base_url),
                                       top_k=1, size=4, states="n1 = 1, n3 = 3",
                                       run_timeout_s=120.0)
        out = run_protocol_file(proto, tmp_path / "run", [], SilentProgress())
    resolved = (tmp_path / "run" / "protocol.resolved.toml").read_text()
    assert 'response_format = "json_object_schema"' in resolved  # json_schema is refused
    db = tmp_path / "run" / "ledger.sqlite"
    cells = query(db, "SELECT COUNT(*) FROM cells WHERE stage='answer'")[0][0]
    attempts = query(db, "SELECT COUNT(*) FROM attempts WHERE stage='answer'")[0][0]
    assert cells == 4 * 2 * 2
    assert attempts <= 1.25 * cells, f"{attempts} attempts for {cells} cells"
    assert "exact" in out.results["kernels"]
