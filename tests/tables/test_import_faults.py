"""``snapaudit import`` of logs the real tools wrote against a faulty endpoint
(tests/tables/import_logs: promptfoo 0.121 ``--repeat 3`` and lm-eval 0.4.13 with a dict
``model_args``; examples/import/fault_logs.py wrote them): an empty, blank or null output is
an errored call, as ``snapaudit analyze`` says it is; ``import --analyze`` is ``analyze``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from snapaudit.errors import ConfigError, InputError
from snapaudit.tables import read_answers
from snapaudit.tables.foreign import IMPORT_TOOLS, import_logs, read_sources
from snapaudit.tables.foreign.common import one_line
from snapaudit.tables.foreign.naming import Hint, name_hints, parse_args
from tests.helpers.cli import exit_code

LOGS = Path(__file__).resolve().parent / "import_logs"
PROMPTFOO = str(LOGS / "promptfoo_repeat3_faults.json")
LMEVAL = sorted(str(p) for p in (LOGS / "lmeval_api").glob("*/samples_*.jsonl"))
OLD, NEW = "openai_old-model", "openai_new-model"


def test_an_empty_output_is_refused_naming_the_question_and_repeat_in_one_line(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert exit_code(["import", "promptfoo", PROMPTFOO, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: {PROMPTFOO}: question 'q2' repeat 2 of state '{NEW}' errored: "
                   "empty output [results.results[8]] (and 5 more errored call(s)); re-run it, "
                   "or pass --allow-errors to leave its question out of every state\n")
    assert not (tmp_path / "o" / "answers.jsonl").exists()  # nothing analyze would refuse


def test_allow_errors_leaves_out_and_lists_every_errored_call(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    assert exit_code(["import", "promptfoo", PROMPTFOO, "--out", str(out), "--allow-errors"]) == 0
    err = capsys.readouterr().err
    # what the log holds (read by hand): one empty, three blank, one HTTP 400, one null
    listed = [
        f"question 'q2' repeat 2 of state '{NEW}': empty output",
        f"question 'q4' repeat 1 of state '{NEW}': blank output (white space only)",
        f"question 'q4' repeat 2 of state '{NEW}': blank output (white space only)",
        f"question 'q4' repeat 3 of state '{NEW}': blank output (white space only)",
        f"question 'q5' repeat 1 of state '{OLD}': API error: 400 Bad Request: The model "
        "`old-model` refused the request: content filter triggered (fake)",
        f"question 'q6' repeat 2 of state '{NEW}': No output"]
    for line in listed:
        assert f"\n  {line}\n" in err
    assert "left out 4 question(s) of every state for 6 errored call(s)" in err
    assert f"state {OLD} <- openai:old-model" in err
    prov = json.loads((out / "provenance.json").read_text())
    assert prov["excluded_questions"] == ["q2", "q4", "q5", "q6"]
    assert [(e["question_id"], e["repeat"]) for e in prov["errored_calls"]] == [
        ("q2", 2), ("q4", 1), ("q4", 2), ("q4", 3), ("q5", 1), ("q6", 2)]
    rows = read_answers(out / "answers.jsonl")  # analyze's own reader accepts the table
    # the log's entries in testIdx order (read by hand): q1 at 0-2, q3 at 6-8
    got = {(r.question_id, r.state): [] for r in rows}
    for r in sorted(rows, key=lambda r: r.repeat):
        got[(r.question_id, r.state)].append(r.answer)
    assert got == {("q1", OLD): ["Paris", "Paris", "Lyon"],
                   ("q1", NEW): ["Marseille", "Paris", "Marseille"],
                   ("q3", OLD): ["Au", "Au", "Au"], ("q3", NEW): ["Gd", "Gd", "Au"]}


def test_import_analyze_writes_what_analyze_writes(tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    args = ["--old", OLD, "--new", NEW, "--draws", "300", "--seed", "4"]
    assert exit_code(["import", "promptfoo", PROMPTFOO, "--out", str(out), "--allow-errors",
                  "--analyze", *args]) == 0
    printed = capsys.readouterr().out
    assert exit_code(["analyze", "--answers", str(out / "answers.jsonl"), "--gold",
                  str(out / "gold.jsonl"), "--json", str(tmp_path / "r.json"), *args]) == 0
    assert capsys.readouterr().out == printed
    assert (out / "results.json").read_bytes() == (tmp_path / "r.json").read_bytes()


def test_lmeval_dict_model_args_give_short_state_names_and_the_mapping(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "o"
    assert exit_code(["import", "lm-eval", *LMEVAL, "--out", str(out), "--allow-errors"]) == 0
    err = capsys.readouterr().err
    assert ("state old-model <- model=old-model,base_url=http://127.0.0.1:8000/v1/chat/"
            "completions,num_concurrent=1,tokenized_requests=False,tokenizer_backend=None"
            ) in err
    rows = read_answers(out / "answers.jsonl")
    assert {r.state for r in rows} == {"old-model", "new-model"}
    # lm-eval wrote new-model's null output as "" (doc 5, repeat 3), its empty one at doc 1
    assert sorted({r.question_id for r in rows}) == ["0", "2", "4"]
    first = next(r for r in rows if r.question_id == "0")
    assert first.question == "Question: What is the capital of France?\nAnswer:"
    label = "model=new-model,base_url=http://127.0.0.1:8000/v1/chat/completions," \
        "num_concurrent=1,tokenized_requests=False,tokenizer_backend=None"
    named = import_logs("lm-eval", LMEVAL, allow_errors=True,  # --state by name or by args
                        states={"old-model": "before", label: "after"})
    assert named.states == {"before": [label.replace("new", "old")], "after": [label]}


@pytest.mark.parametrize(("hints", "expected"), [
    ([Hint("a", parse_args({"model": "m", "temperature": 0.0}), "x"),
      Hint("b", parse_args({"model": "m", "temperature": 0.7}), "x")],
     {"a": "m-temperature_0.0", "b": "m-temperature_0.7"}),
    ([Hint("a", parse_args("pretrained=/models/llama-3-8b/,dtype=bf16")),
      Hint("b", parse_args("pretrained=EleutherAI/pythia-160m"))],
     {"a": "llama-3-8b", "b": "EleutherAI_pythia-160m"}),
    ([Hint("a", parse_args("dtype=bf16"), "hf"), Hint("openai/gpt x")],
     {"a": "hf", "openai/gpt x": "openai_gpt_x"}),
])
def test_state_names_are_the_model_then_what_differs(hints: list[Hint],
                                                      expected: dict[str, str]) -> None:
    assert name_hints(hints) == expected


def test_two_models_that_would_share_a_name_are_refused() -> None:
    with pytest.raises(InputError, match="both be named state 'a_b'"):
        name_hints([Hint("a/b"), Hint("a b")])


@pytest.mark.parametrize(("error", "line"), [
    ("API error: 400 Bad Request\n{\"error\":{\"message\":\"bad\\nthing\"}}",
     "API error: 400 Bad Request: bad thing"),
    ("Error: boom\n    at call (provider.js:10:5)\n    at run (node:internal:1:1)", "Error: boom"),
    ("Traceback (most recent call last):\n  File \"p.py\", line 3, in call_api\n    x()\n"
     "ValueError: no model", "ValueError: no model"),
    ("x" * 500, "x" * 239 + "…"),
])
def test_an_error_is_shown_as_one_line(error: str, line: str) -> None:
    assert one_line(error) == line


def test_the_import_tools_are_a_registry() -> None:
    assert IMPORT_TOOLS.kinds() == ("inspect", "promptfoo", "lm-eval")
    with pytest.raises(ConfigError, match=r"unknown import tool 'nope' \(known: 'inspect', "):
        read_sources("nope", [PROMPTFOO])
