"""``snapaudit import inspect`` fills ``steps`` from a log's tool calls: real logs that
inspect_ai writes itself (examples/import/inspect/make_tool_logs.py: ``mockllm/model`` playing
a scripted agent, in the .eval and the .json format), steps and trajectory kernels by hand;
a log without tool calls imports exactly as before."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from snapaudit.tables import AnswerRow, write_answers
from snapaudit.tables.foreign import import_logs
from snapaudit.tables.records import Step
from tests.helpers.cli import exit_code as _exit

REPO = Path(__file__).resolve().parents[2]
MAKE = REPO / "examples" / "import" / "inspect" / "make_tool_logs.py"
PLAIN = sorted(str(p) for p in (REPO / "examples/import/logs/inspect").glob("*.eval"))
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("inspect_ai") is None, reason="inspect_ai is not installed (the "
    "'inspect' extra); its log format is read only through its own reader")

# the planted agent (make_tool_logs.py): state -> question -> (search query, the hit's doc)
SEARCH = {"old": {"q1": ("capital of France", "d1"), "q2": ("tallest mountain", "d2"),
                  "q3": ("longest river", "d4"), "q4": ("speed of light", "d6")},
          "new": {"q1": ("capital of France", "d1"), "q2": ("tallest mountain", "d3"),
                  "q3": ("river length", "d5"), "q4": ("speed of light", "d6")}}
# two arguments: their canonical JSON; a plain-text result: no doc ids
READ = Step("read", '{"doc_id":"d6","section":2}', (),
            "section 2 of d6: light travels 299792 km each second")


def _expected(state: str, qid: str, repeat: int) -> tuple[Step, ...]:
    query, doc = SEARCH[state][qid]
    hits = f'[{{"id": "{doc}", "title": "document {doc}"}}]'  # the JSON text of the result
    return (Step("search", query, (doc,), hits),) + ((READ,) if (qid, repeat) == ("q4", 2)
                                                     else ())


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """format -> state -> the log inspect_ai wrote (its data directory kept in the tmp dir)."""
    base = tmp_path_factory.mktemp("inspect-tools")
    env = {**os.environ, "XDG_DATA_HOME": str(base / "data")}
    found: dict[str, dict[str, str]] = {}
    for fmt in ("eval", "json"):
        done = subprocess.run([sys.executable, str(MAKE), str(base / fmt), fmt], env=env,
                              capture_output=True, text=True, timeout=600, check=False)
        assert done.returncode == 0, done.stderr[-2000:]
        found[fmt] = {s: str(next((base / fmt / s).glob(f"*.{fmt}"))) for s in ("old", "new")}
    return found


def _import(paths: dict[str, str], **options: str) -> dict[tuple[str, str, int], AnswerRow]:
    imported = import_logs("inspect", [paths["old"], paths["new"]],
                           states={p: s for s, p in paths.items()}, **options)
    return {(r.state, r.question_id, r.repeat): r for r in imported.rows}


@pytest.mark.parametrize("fmt", ["eval", "json"])
def test_steps_are_the_tool_calls_as_computed_by_hand(
        logs: dict[str, dict[str, str]], fmt: str) -> None:
    rows = _import(logs[fmt])
    assert len(rows) == 16
    for (state, qid, repeat), row in rows.items():
        assert row.steps == _expected(state, qid, repeat), (state, qid, repeat)
    assert rows["new", "q3", 1].answer == "Amazon" and rows["new", "q2", 2].answer == "K2"


def test_analyze_of_the_imported_table_gives_the_trajectory_kernels_by_hand(
        logs: dict[str, dict[str, str]], tmp_path: Path) -> None:
    old, new = logs["eval"]["old"], logs["eval"]["new"]
    out = tmp_path / "imp"
    assert _exit(["import", "inspect", old, new, "--state", f"old={old}", "--state",
                  f"new={new}", "--out", str(out)]) == 0
    assert _exit(["analyze", "--answers", str(out / "answers.jsonl"), "--old", "old", "--new",
                  "new", "--gate-profile", "exact-only", "--json", str(tmp_path / "r.json")]) == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    got = {"exact": doc["kernels"]["exact"], **doc["trajectory"]["kernels"]}
    # per question (q1..q4) w, c: tools 1,1 | 1,1 | 1,1 | 0,1/2 (epoch 2 adds a read);
    # queries 1,1 | 1,1 | 1,0 | 0,1/2; documents 1,1 | 1,0 | 1,0 | 1,1 (read gives no id);
    # exact 1,1 | 1,0 | 1,0 | 1,1
    expected = {"exact": (100.0, 50.0, 50.0), "tools": (75.0, 87.5, -12.5),
                "queries": (75.0, 62.5, 12.5), "documents": (100.0, 50.0, 50.0)}
    for name, (within, cross, d_hat) in expected.items():
        assert (got[name]["within"], got[name]["cross"], got[name]["d_hat"]) == pytest.approx(
            (within, cross, d_hat)), name
    trajectory = doc["trajectory"]
    # q2's 4 changed pairs asked the same (the index), q3's 4 asked otherwise (the agent)
    assert trajectory["changed_pairs"] == {"total": 8, "same_queries": 4,
                                           "different_queries": 4}
    # cross: q3 differs at step 1 (4 pairs), q4 epoch 1 x epoch 2 at step 2 (2 pairs);
    # within: q4's pair of each state at step 2
    assert trajectory["first_divergence"] == {
        "cross": {"pairs": 16, "identical": 10, "at_step": {"1": 4, "2": 2}},
        "within": {"pairs": 8, "identical": 6, "at_step": {"2": 2}}}
    assert trajectory["rows_without_steps"] == 0


def _hand_plain() -> list[AnswerRow]:
    """The shipped tool-free logs converted by hand, doc ids and question included."""
    rows = []
    for path in PLAIN:
        with zipfile.ZipFile(path) as z:
            model = json.loads(z.read("header.json"))["eval"]["model"].replace("/", "_")
            for name in z.namelist():
                if name.startswith("samples/"):
                    s = json.loads(z.read(name))
                    rows.append(AnswerRow(str(s["id"]), model, s["epoch"],
                                          s["output"]["completion"],
                                          tuple(s["store"]["retrieved_context_ids"]),
                                          s["input"]))
    return rows


def test_a_log_without_tool_calls_imports_exactly_as_before(tmp_path: Path) -> None:
    out = tmp_path / "imp"
    assert _exit(["import", "inspect", *PLAIN, "--out", str(out)]) == 0
    imported = [json.loads(x) for x in (out / "answers.jsonl").read_text().splitlines()]
    order = {(r["state"], r["question_id"], r["repeat"]): i for i, r in enumerate(imported)}
    hand = sorted(_hand_plain(), key=lambda r: order[r.state, r.question_id, r.repeat])
    write_answers(tmp_path / "hand.jsonl", hand)
    assert (out / "answers.jsonl").read_bytes() == (tmp_path / "hand.jsonl").read_bytes()
    results = []
    for table in (out / "answers.jsonl", tmp_path / "hand.jsonl"):
        json_path = tmp_path / f"{table.stem}.results.json"
        _exit(["analyze", "--answers", str(table), "--old", "seeded_old", "--new",
               "seeded_new", "--json", str(json_path)])
        results.append(json_path.read_bytes())
    assert results[0] == results[1] and b'"trajectory"' not in results[0]


def _edited(path: str, folder: Path, edit: Callable[[Any], None]) -> str:
    """The log at ``path`` with ``edit`` applied to each sample, written by inspect_ai."""
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(path)
    for sample in log.samples or []:
        edit(sample)
    folder.mkdir(parents=True, exist_ok=True)
    write_eval_log(log, str(folder / Path(path).name))
    return str(folder / Path(path).name)


def _results_edited(sample: Any) -> None:
    from inspect_ai.tool import ToolCallError

    results = [m for m in sample.messages if m.role == "tool"]
    at = (sample.id, sample.epoch)
    if at == ("q1", 1):  # ids in the tool message's metadata come first; integers as text
        results[0].metadata = {"retrieved_context_ids": ["m1", 7]}
    elif at == ("q2", 1):  # a JSON object carrying the key
        results[0].content = '{"retrieved_context_ids": ["x1", "x2"], "total": 2}'
    elif at == ("q3", 1):  # a tool error, no text
        results[0].content, results[0].error = "", ToolCallError("timeout", "took too long")
    elif at == ("q4", 2):  # the read never got its result
        sample.messages.remove(results[1])
    elif at == ("q2", 2):  # a text the log stores once, as an attachment
        sample.attachments["h1"] = '[{"id": "a1"}, {"id": 2}]'
        results[0].content = "attachment://h1"
    elif at == ("q1", 2):  # no tool call at all
        sample.messages = [m for m in sample.messages
                           if m.role != "tool" and not getattr(m, "tool_calls", None)]


def test_doc_ids_outputs_and_calls_without_a_result(
        logs: dict[str, dict[str, str]], tmp_path: Path) -> None:
    # the .json format: write_eval_log keeps an attachment's reference there (in an .eval log
    # it writes the text in place)
    paths = {**logs["json"], "old": _edited(logs["json"]["old"], tmp_path, _results_edited)}
    rows = _import(paths)
    hits = '[{"id": "d1", "title": "document d1"}]'
    assert rows["old", "q1", 1].steps == (Step("search", "capital of France", ("m1", "7"),
                                               hits),)
    assert rows["old", "q2", 1].steps == (Step(
        "search", "tallest mountain", ("x1", "x2"),
        '{"retrieved_context_ids": ["x1", "x2"], "total": 2}'),)
    assert rows["old", "q3", 1].steps == (Step("search", "longest river", (),
                                               "timeout: took too long"),)
    assert rows["old", "q4", 2].steps == (_expected("old", "q4", 1)[0],
                                          Step("read", READ.input, (), None))
    assert rows["old", "q2", 2].steps == (Step("search", "tallest mountain", ("a1", "2"),
                                               '[{"id": "a1"}, {"id": 2}]'),)
    # another sample of the import has steps: this one took none (an empty trajectory)
    assert rows["old", "q1", 2].steps == ()
    assert rows["new", "q2", 1].steps == _expected("new", "q2", 1)
    # another key: the metadata and the object no longer name ids; the hit list still does
    rows = _import(paths, doc_ids_key="ids")
    assert rows["old", "q1", 1].steps[0].doc_ids == ("d1",)  # type: ignore[index]
    assert rows["old", "q2", 1].steps[0].doc_ids == ()  # type: ignore[index]


def _too_many(sample: Any) -> None:
    from inspect_ai.tool import ToolCall

    if (sample.id, sample.epoch) == ("q2", 1):
        first = next(m for m in sample.messages if getattr(m, "tool_calls", None))
        first.tool_calls = [ToolCall(id=f"c{i}", function="search", arguments={"query": "x"})
                            for i in range(257)]


def _too_long(sample: Any) -> None:
    if (sample.id, sample.epoch) == ("q2", 1):
        next(m for m in sample.messages if m.role == "tool").content = "x" * (1 << 20)


def _bad_ids(sample: Any) -> None:
    if (sample.id, sample.epoch) == ("q2", 1):
        next(m for m in sample.messages if m.role == "tool").metadata = {
            "retrieved_context_ids": "d1"}


@pytest.mark.parametrize(("edit", "cause"), [
    (_too_many, "'steps' has 257 steps; at most 256"),
    # "search" + "tallest mountain" + 2^20 x's (no JSON: no ids): 6 + 16 + 1048576 bytes
    (_too_long, "'steps' hold 1048598 bytes of text; at most 1048576"),
    (_bad_ids, "steps[0].doc_ids must be a list of ids"),
])
def test_a_bad_or_over_long_trajectory_is_one_error_line(
        logs: dict[str, dict[str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        edit: Callable[[Any], None], cause: str) -> None:
    old = _edited(logs["eval"]["old"], tmp_path / "edited", edit)
    new = logs["eval"]["new"]
    assert _exit(["import", "inspect", old, new, "--state", f"old={old}", "--state",
                  f"new={new}", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    assert f"{old}: sample 'q2' epoch 1: its tool calls as steps: {cause}" in err
    assert not (tmp_path / "o" / "answers.jsonl").exists()


@pytest.mark.parametrize("name", ["bad.eval", "bad.json", "cut.eval"])
def test_a_file_inspect_ai_cannot_read_is_one_error_line(
        logs: dict[str, dict[str, str]], tmp_path: Path, capsys: pytest.CaptureFixture[str],
        name: str) -> None:
    path = tmp_path / name
    real = Path(logs["eval"]["old"]).read_bytes()
    path.write_bytes(real[:len(real) // 2] if name == "cut.eval" else b"not a log\n")
    assert _exit(["import", "inspect", str(path), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"{path}: inspect_ai cannot read this log: " in err


def test_a_log_of_more_samples_than_one_read_imports_whole_and_in_order(
        logs: dict[str, dict[str, str]], tmp_path: Path) -> None:
    from inspect_ai.log import EvalSample, read_eval_log, write_eval_log
    from inspect_ai.model import ModelOutput

    from snapaudit.tables.foreign.inspect_log import CHUNK

    n = CHUNK // 2 + 5  # x 2 epochs: more samples than one read of inspect_ai's reader
    header = read_eval_log(logs["eval"]["old"], header_only=True)
    ids = [f"s{i:03d}" for i in range(n)][::-1]  # the dataset's order, not the names'
    dataset = header.eval.dataset.model_copy(update={"samples": n, "sample_ids": ids})
    paths = {}
    for state in ("old", "new"):
        samples = [EvalSample(id=i, epoch=e, input="q", target="a", messages=[],
                              output=ModelOutput.from_content("m", f"{state} {i} {e}"))
                   for e in (2, 1) for i in ids]
        paths[state] = str(tmp_path / f"{state}.eval")
        write_eval_log(header.model_copy(update={
            "eval": header.eval.model_copy(update={"dataset": dataset}),
            "samples": samples, "reductions": None}), paths[state])
    rows = list(import_logs("inspect", list(paths.values()),
                            states={p: s for s, p in paths.items()}).rows)
    assert [(r.state, r.question_id, r.repeat) for r in rows] == [
        (s, i, e) for s in ("old", "new") for i in ids for e in (1, 2)]
    assert all(r.answer == f"{r.state} {r.question_id} {r.repeat}" and r.steps is None
               for r in rows)
