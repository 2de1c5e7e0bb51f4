"""``steps`` in answer tables: JSONL and Parquet rows keep them, bad ones are refused in one
line naming the file, the line and the step; tables without them are written as before."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from snapaudit.errors import InputError, TransportInvalid
from snapaudit.systems.python import to_outcome
from snapaudit.tables import AnswerTable, read_answers, write_answers
from snapaudit.tables.records import Step
from snapaudit.tables.steps import MAX_STEPS, MAX_STEPS_BYTES, StepsError, parse_steps
from tests.fakes.agent_world import agent_rows


@pytest.mark.parametrize("name", ["answers.jsonl", "answers.parquet"])
def test_steps_round_trip(tmp_path: Path, name: str) -> None:
    rows = agent_rows()
    write_answers(tmp_path / name, rows)
    table = read_answers(tmp_path / name)
    assert isinstance(table, AnswerTable) and table.steps is not None  # the column readers
    assert list(table) == rows
    assert list(read_answers(tmp_path / name, fast=False)) == rows  # the checking reader


def test_a_table_without_steps_is_written_as_before(tmp_path: Path) -> None:
    rows = [replace(r, steps=None) for r in agent_rows()]
    write_answers(tmp_path / "a.jsonl", rows)
    first = json.loads((tmp_path / "a.jsonl").read_text().splitlines()[0])
    assert sorted(first) == ["answer", "question_id", "repeat", "state"]
    assert type(read_answers(tmp_path / "a.jsonl")).__name__ == "AnswerTable"


def test_json_form_keeps_output_only_when_given(tmp_path: Path) -> None:
    write_answers(tmp_path / "a.jsonl", agent_rows())
    lines = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text().splitlines()]
    q004 = next(x for x in lines if x["question_id"] == "q004" and x["repeat"] == 2)
    assert q004["steps"] == [
        {"tool": "search", "input": "item 4", "doc_ids": ["d4"], "output": "1 hits"},
        {"tool": "read", "input": "d4", "doc_ids": ["d4b"]}]


def _line(steps: Any) -> str:
    return json.dumps({"question_id": "q1", "state": "a", "repeat": 1, "answer": "x",
                       "steps": steps})


@pytest.mark.parametrize(("steps", "message"), [
    ("search", "'steps' must be a list of steps, got str"),
    ([{"tool": "search"}], "steps[0].input must be a string, got nothing"),
    ([{"tool": "", "input": "q"}], "steps[0].tool must be a nonempty string, got str"),
    ([{"tool": "  ", "input": "q"}], "steps[0].tool must be a nonempty string, got str"),
    ([{"tool": "s", "input": "q", "doc_ids": [1]}], "steps[0].doc_ids must be a list of "
                                                    "strings"),
    ([{"tool": "s", "input": "q"}, {"tool": "s", "input": "q", "args": {}}],
     "steps[1]: unknown field(s): args"),
    ([{"tool": "s", "input": "q", "output": 3}], "steps[0].output must be a string, got int"),
    ([{"tool": "s", "input": "q"}] * (MAX_STEPS + 1),
     f"'steps' has {MAX_STEPS + 1} steps; at most {MAX_STEPS}"),
])
def test_bad_steps_name_the_line_and_the_step(tmp_path: Path, steps: Any, message: str) -> None:
    path = tmp_path / "a.jsonl"
    path.write_text(_line(steps) + "\n")
    with pytest.raises(InputError) as err:
        read_answers(path)
    assert str(err.value) == f"{path}:1: {message}"


def test_steps_are_bounded_in_bytes() -> None:
    big = [{"tool": "read", "input": "d", "output": "x" * (MAX_STEPS_BYTES // 4)}] * 4
    with pytest.raises(StepsError, match=r"hold \d+ bytes of text; at most 1048576"):
        parse_steps(big)


def test_a_python_reply_with_steps() -> None:
    out = to_outcome({"answer": "a", "steps": [{"tool": "search", "input": "q",
                                                "doc_ids": [7, "d2"]}]}, 0.1)
    assert out.steps == (Step("search", "q", ("7", "d2")),)
    assert to_outcome({"answer": "a"}, 0.1).steps is None
    built = [Step("search", "q", ("d1",)), Step("read", "d1", output="text")]
    assert to_outcome({"answer": "a", "steps": built}, 0.1).steps == tuple(built)
    with pytest.raises(TransportInvalid) as err:
        to_outcome({"answer": "a", "steps": [{"tool": "search", "input": None}]}, 0.1)
    assert err.value.reason == "schema"
    assert "steps[0].input must be a string, got nothing" in str(err.value)


@pytest.mark.parametrize(("steps", "message"), [
    ([{"tool": " ", "input": "q", "doc_ids": ["d"], "output": None}],
     "steps[0].tool must be a nonempty string, got str"),
    ([{"tool": "s", "input": "q", "doc_ids": ["d"] * 1025, "output": None}],
     "steps[0].doc_ids has 1025 ids; at most 1024"),
])
def test_bad_steps_in_parquet_name_the_row(tmp_path: Path, steps: Any, message: str) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from snapaudit.tables.parquet import STEPS

    rows = [dict(question_id="q1", state=s, repeat=r, answer="x", steps=steps)
            for s in ("a", "b") for r in (1, 2)]
    table = pa.Table.from_pylist(rows, pa.schema([
        ("question_id", pa.string()), ("state", pa.string()), ("repeat", pa.int64()),
        ("answer", pa.string()), ("steps", STEPS)]))
    pq.write_table(table, tmp_path / "a.parquet")
    with pytest.raises(InputError) as err:
        read_answers(tmp_path / "a.parquet")
    assert str(err.value) == f"{tmp_path / 'a.parquet'}:1: {message}"


def _parquet(path: Path, steps_of: Any, schema_steps: Any, row_group: int = 64) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = [dict(question_id=f"q{q}", state=s, repeat=r, answer="x", steps=steps_of(q, s, r))
            for q in range(3) for s in ("a", "b") for r in (1, 2)]
    pq.write_table(pa.Table.from_pylist(rows, pa.schema([
        ("question_id", pa.string()), ("state", pa.string()), ("repeat", pa.int64()),
        ("answer", pa.string()), ("steps", schema_steps)])), path, row_group_size=row_group)


def test_a_parquet_steps_column_read_field_by_field(tmp_path: Path) -> None:
    import pyarrow as pa

    from snapaudit.tables.parquet import STEPS

    def steps_of(q: int, s: str, r: int) -> Any:
        if (q, s, r) == (0, "a", 1):
            return None  # a row without steps
        if (q, s, r) == (0, "a", 2):
            return []  # a row whose agent took no step
        return [{"tool": "search", "input": f"q{q} {s}", "doc_ids": [f"d{q}", "é" * r],
                 "output": None if r == 1 else "out"}, {"tool": "read", "input": f"d{q}",
                                                        "doc_ids": [], "output": None}]

    _parquet(tmp_path / "a.parquet", steps_of, STEPS, row_group=5)  # several chunks
    table = read_answers(tmp_path / "a.parquet")
    assert isinstance(table, AnswerTable)
    assert list(table) == list(read_answers(tmp_path / "a.parquet", fast=False))
    rows = {(r.question_id, r.state, r.repeat): r.steps for r in table}
    assert rows[("q0", "a", 1)] is None and rows[("q0", "a", 2)] == ()
    assert rows[("q2", "b", 2)] == (Step("search", "q2 b", ("d2", "éé"), "out"),
                                    Step("read", "d2", (), None))
    # a struct without doc_ids and output: steps with neither
    lean = pa.list_(pa.struct([("tool", pa.string()), ("input", pa.string())]))
    _parquet(tmp_path / "b.parquet", lambda q, s, r: [{"tool": "t", "input": f"{q}{s}{r}"}],
             lean)
    again = read_answers(tmp_path / "b.parquet")
    assert isinstance(again, AnswerTable)
    assert next(iter(again)).steps == (Step("t", "0a1"),)


@pytest.mark.parametrize("name", ["answers.jsonl", "answers.parquet"])
def test_steps_beside_doc_hashes(tmp_path: Path, name: str) -> None:
    from snapaudit.hashing import sha256_text

    out = to_outcome({"answer": "a", "doc_ids": ["d1", "d2"], "doc_texts": ["one", "two"],
                      "steps": [{"tool": "search", "input": "q", "doc_ids": ["d1", "d2"]}]},
                     0.1)
    assert out.doc_hashes == (sha256_text("one"), sha256_text("two"))
    assert out.steps == (Step("search", "q", ("d1", "d2")),)
    hashes = (sha256_text("one"), sha256_text("two"))
    rows = [replace(r, doc_ids=("d1", "d2"), doc_hashes=hashes) for r in agent_rows()]
    write_answers(tmp_path / name, rows)
    assert list(read_answers(tmp_path / name)) == rows
    assert list(read_answers(tmp_path / name, fast=False)) == rows
