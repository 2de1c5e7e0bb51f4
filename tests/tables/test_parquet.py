"""Parquet tables through pyarrow: the same rows, labels and gold as JSONL, the same checks.

A Parquet table is read into the columns (:mod:`snapaudit.tables.columnar`) when it vouches
for itself; anything else goes to the checking reader row by row, whose errors name the file,
the row and the problem with the JSONL reader's words.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from snapaudit.errors import InputError
from snapaudit.tables import (
    AnswerRef,
    AnswerRow,
    AnswerTable,
    LabelTable,
    PairLabel,
    read_answers,
    read_gold,
    read_labels,
    write_answers,
    write_gold,
    write_labels,
)


def _rows() -> list[AnswerRow]:
    return [AnswerRow(q, s, j, f"{q}{s}{j}ä", ("d1", "d2") if s == "A" else None,
                      "Q?" if j == 1 else None)
            for q in ("q2", "q1") for s in ("B", "A") for j in (1, 2)]


def _labels() -> list[PairLabel]:
    return [PairLabel("q1", AnswerRef("A", 1), AnswerRef("B", 2), True, "j1"),
            PairLabel("q2", AnswerRef("B", 1), AnswerRef("A", 1), False, "default"),
            PairLabel("q1", AnswerRef("A", 1), AnswerRef("B", 2), False, "j2")]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_answers_round_trip(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"answers{suffix}"
    write_answers(path, _rows())
    table = read_answers(path)
    assert isinstance(table, AnswerTable) and table == _rows()
    assert read_answers(path, fast=False) == _rows()
    if suffix == ".parquet":
        assert path.read_bytes()[:4] == b"PAR1"
        assert pq.read_table(path).column_names == ["question_id", "state", "repeat", "answer",
                                                    "doc_ids", "question"]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_labels_round_trip(tmp_path: Path, suffix: str) -> None:
    write_labels(tmp_path / f"l{suffix}", _labels())
    table = read_labels(tmp_path / f"l{suffix}", _rows())
    assert isinstance(table, LabelTable)
    assert table == _labels() and _labels() == table
    assert list(table) == _labels() and table[1] == _labels()[1] and table[-1] == _labels()[2]
    assert table[0:2] == _labels()[0:2]
    assert table.judges == ("j1", "default", "j2")
    assert np.array_equal(table.for_judge("j2"), [False, False, True])
    assert read_labels(tmp_path / f"l{suffix}", _rows(), fast=False) == _labels()


def test_missing_and_empty_judge_mean_default(tmp_path: Path) -> None:
    ref = pa.struct([("state", pa.string()), ("repeat", pa.int32())])
    table = pa.table({"question_id": ["q", "q"], "a": pa.array([{"state": "A", "repeat": 1}] * 2,
                                                               ref),
                      "b": pa.array([{"state": "A", "repeat": 2}, {"state": "B", "repeat": 1}],
                                    ref),
                      "same": [True, True], "judge": ["", None]})
    pq.write_table(table, tmp_path / "l.parquet")
    for fast in (None, False):
        labels = read_labels(tmp_path / "l.parquet", fast=fast)
        assert [lab.judge for lab in labels] == ["default", "default"]
        assert [lab.b for lab in labels] == [AnswerRef("A", 2), AnswerRef("B", 1)]
    pq.write_table(table.drop_columns(["judge"]), tmp_path / "l.parquet")
    assert [lab.judge for lab in read_labels(tmp_path / "l.parquet")] == ["default"] * 2


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_gold_round_trip(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"g{suffix}"
    write_gold(path, {"b": ("x", "y"), "a": ("z",)})
    for fast in (None, False):
        gold = read_gold(path, fast=fast)
        assert gold == {"b": ("x", "y"), "a": ("z",)} and list(gold) == ["b", "a"]


def _parquet(path: Path, columns: dict[str, pa.Array | list[object]]) -> Path:
    pq.write_table(pa.table(columns), path)
    return path


GOOD = {"question_id": ["q", "q", "q", "q"], "state": ["A", "A", "B", "B"],
        "repeat": [1, 2, 1, 2], "answer": ["x", "y", "x", "x"]}


@pytest.mark.parametrize(("change", "row", "problem"), [
    ({"extra": [1, 2, 3, 4]}, 1, "unknown field\\(s\\): extra"),
    ({"answer": ["x", None, "x", "x"]}, 2, "missing field 'answer'"),
    ({"repeat": [1.0, 2.0, 1.0, 2.0]}, 1, "field 'repeat' must be int, got float"),
    ({"repeat": ["1", "2", "1", "2"]}, 1, "field 'repeat' must be int, got str"),
    ({"repeat": [1, 1, 1, 2]}, 2, "duplicate row.*first at line 1"),
    ({"state": ["A", "A", "B b", "B b"]}, 3, "not a valid state name"),
    ({"answer": ["x", " ", "x", "x"]}, 2, "empty answer"),
    ({"doc_ids": [["d"], [None], ["d"], None]}, 2, "'doc_ids' must be a list of strings"),
])
def test_bad_parquet_answers_name_the_row(tmp_path: Path, change: dict[str, list[object]],
                                          row: int, problem: str) -> None:
    path = _parquet(tmp_path / "answers.parquet", {**GOOD, **change})
    with pytest.raises(InputError, match=problem) as err:
        read_answers(path)
    assert (err.value.path, err.value.line) == (str(path), row)


def test_parquet_with_clusters_and_other_types_reads_as_jsonl(tmp_path: Path) -> None:
    path = _parquet(tmp_path / "answers.parquet",
                    {**GOOD, "repeat": pa.array(GOOD["repeat"], pa.int8()),
                     "state": pa.array(GOOD["state"]).dictionary_encode(),
                     "cluster": ["c1", "c1", "c1", "c1"]})
    rows = read_answers(path)
    assert isinstance(rows, list) and rows[1] == AnswerRow("q", "A", 2, "y", cluster="c1")
    path = _parquet(tmp_path / "answers.parquet",
                    {**GOOD, "repeat": pa.array(GOOD["repeat"], pa.int8()),
                     "answer": pa.array(GOOD["answer"], pa.large_string())})
    table = read_answers(path)
    assert isinstance(table, AnswerTable) and table == [
        AnswerRow(q, s, j, a) for q, s, j, a in zip(*GOOD.values(), strict=True)]


def test_a_file_that_is_no_table(tmp_path: Path) -> None:
    path = tmp_path / "answers.parquet"
    path.write_bytes(b"PAR1 but nothing else")
    with pytest.raises(InputError, match="not a readable Parquet file") as err:
        read_answers(path)
    assert err.value.path == str(path)


def test_answer_table_is_the_rows_and_gives_the_same_grid(tmp_path: Path) -> None:
    import random

    from snapaudit.stats.cluster import resampling
    from snapaudit.stats.kernels import AnswerGrid
    from snapaudit.tables import AnswerTable

    rng = random.Random(3)
    rows = [AnswerRow(f"q{q}", s, j, rng.choice(["x", "y", "z z"]),
                      (f"d{q}", "e") if rng.random() < 0.7 else None, None)
            for q in (5, 2, 9, 1) for s in ("C", "A", "B") for j in (2, 1, 3)]
    rng.shuffle(rows)  # questions, states and repeats in no particular order
    write_answers(tmp_path / "a.jsonl", rows)
    assert isinstance(read_answers(tmp_path / "a.jsonl", fast=False), list)
    table = read_answers(tmp_path / "a.jsonl")
    assert isinstance(table, AnswerTable) and table.repeats == 3
    assert table == rows and rows == table and list(table) == rows
    assert table[0] == rows[0] and table[-1] == rows[-1] and table[3:5] == rows[3:5]
    fast, slow = AnswerGrid.from_rows(table), AnswerGrid.from_rows(rows)
    assert fast == slow
    assert list(fast.answers) == list(slow.answers)  # the same key order (first appearance)
    assert list(fast.doc_ids.items()) == list(slow.doc_ids.items())
    for grid in (fast, slow, fast.subset(["q9", "q1"])):  # codes name each cell's answer
        values, codes = grid.distinct
        assert len(set(values)) == len(values)
        assert [tuple(values[c] for c in row) for row in codes.tolist()] == list(
            grid.answers.values())
    assert resampling(table, fast.question_ids).groups is None
    labels = [PairLabel("q9", AnswerRef("B", 3), AnswerRef("C", 1), True)]
    assert read_labels_checks(tmp_path, labels, table)
    labels.append(PairLabel("q9", AnswerRef("B", 4), AnswerRef("C", 1), True))
    with pytest.raises(InputError, match="unknown answer: question 'q9', state 'B', repeat 4"):
        read_labels_checks(tmp_path, labels, table)


def read_labels_checks(tmp_path: Path, labels: list[PairLabel],
                       answers: Sequence[AnswerRow]) -> bool:
    write_labels(tmp_path / "l.jsonl", labels)
    return read_labels(tmp_path / "l.jsonl", answers) == labels


def test_doc_tuples_are_the_lists_and_shared() -> None:
    import random

    import pyarrow as pa

    from snapaudit.tables.columnar import _doc_tuples

    rng = random.Random(1)
    for _ in range(200):
        rows = [None if (r := rng.random()) < 0.15 else [] if r < 0.25 else
                [rng.choice(["a", "b", "dd", "é"]) for _ in range(rng.randint(1, 4))]
                for _ in range(rng.randint(0, 40))]
        got = _doc_tuples(pa.array(rows, type=pa.list_(pa.string())))
        assert got == [None if r is None else tuple(r) for r in rows]
        first: dict[tuple[str, ...], tuple[str, ...]] = {}
        assert all(first.setdefault(t, t) is t for t in got if t is not None)  # one tuple each




def test_import_as_parquet_then_analyze_gives_the_jsonl_results(tmp_path: Path) -> None:
    from snapaudit.cli import main

    logs = Path(__file__).resolve().parents[2] / "examples" / "import" / "logs"
    results = {}
    for fmt in ("jsonl", "parquet"):
        out = tmp_path / fmt
        main(["import", "promptfoo", str(logs / "promptfoo_repeat2.json"), "--out", str(out),
              "--state", "before=old", "--state", "after=new", "--format", fmt])
        assert sorted(p.name for p in out.iterdir()) == sorted(
            [f"answers.{fmt}", f"gold.{fmt}", "provenance.json"])
        main(["analyze", "--answers", str(out / f"answers.{fmt}"), "--gold",
              str(out / f"gold.{fmt}"), "--old", "before", "--new", "after", "--draws", "200",
              "--json", str(out / "results.json")])
        results[fmt] = (out / "results.json").read_bytes()
    assert read_answers(tmp_path / "parquet" / "answers.parquet") == read_answers(
        tmp_path / "jsonl" / "answers.jsonl")
    assert read_gold(tmp_path / "parquet" / "gold.parquet") == read_gold(
        tmp_path / "jsonl" / "gold.jsonl")
    assert results["parquet"] == results["jsonl"]


def test_bad_parquet_labels_name_the_row(tmp_path: Path) -> None:
    write_labels(tmp_path / "l.parquet", _labels())
    table = pq.read_table(tmp_path / "l.parquet")
    same = table.column("same").to_pylist()
    same[2] = None
    pq.write_table(table.set_column(3, "same", pa.array(same, pa.bool_())),
                   tmp_path / "l.parquet")
    with pytest.raises(InputError, match="missing field 'same'") as err:
        read_labels(tmp_path / "l.parquet", _rows())
    assert err.value.line == 3
    write_labels(tmp_path / "l.parquet", [*_labels(), _labels()[0]])
    with pytest.raises(InputError, match=r"duplicate label.*first at line 1") as err:
        read_labels(tmp_path / "l.parquet", _rows())
    assert err.value.line == 4


def test_dictionaries_in_another_order_and_row_groups_keep_first_appearance(
        tmp_path: Path) -> None:
    rows = [AnswerRow(f"q{q}", s, j, f"a{(q * j) % 3}", (f"d{q}", "e"), f"Q{q}")
            for q in (5, 2, 9, 1) for s in ("n1", "n0") for j in (1, 2)]
    write_answers(tmp_path / "a.jsonl", rows)
    expected = read_answers(tmp_path / "a.jsonl")
    assert isinstance(expected, AnswerTable)

    def reversed_dictionary(values: list[str]) -> pa.DictionaryArray:
        distinct = sorted(set(values), reverse=True)  # not the order of first appearance
        return pa.DictionaryArray.from_arrays(
            pa.array([distinct.index(v) for v in values], pa.int32()), pa.array(distinct))

    columns = {k: reversed_dictionary([getattr(r, k) for r in rows])
               for k in ("question_id", "state", "answer", "question")}
    columns["repeat"] = pa.array([r.repeat for r in rows], pa.int16())
    columns["doc_ids"] = pa.array([list(r.doc_ids or ()) for r in rows])
    pq.write_table(pa.table(columns), tmp_path / "a.parquet", row_group_size=3)
    assert pq.ParquetFile(tmp_path / "a.parquet").metadata.num_row_groups == 6
    table = read_answers(tmp_path / "a.parquet")
    assert isinstance(table, AnswerTable) and table == rows
    assert (table.question_ids, table.states) == (expected.question_ids, expected.states)
    assert table.answer_codes[0] == expected.answer_codes[0]
    assert table.answer_codes[1].tolist() == expected.answer_codes[1].tolist()
    labels = [PairLabel(r.question_id, AnswerRef("n0", 1), AnswerRef(r.state, 2), True, j)
              for r in rows[::4] for j in ("z", "default")]
    write_labels(tmp_path / "l.parquet", labels)
    written = pq.read_table(tmp_path / "l.parquet")
    pq.write_table(written.set_column(4, "judge", reversed_dictionary(
        written.column("judge").to_pylist())), tmp_path / "l.parquet", row_group_size=2)
    read = read_labels(tmp_path / "l.parquet", rows)
    assert read == labels and read.judges == ("z", "default")


@pytest.mark.parametrize(("codes", "count", "expected"), [
    ([0, 0, 1, 0, 2, 1], 3, True), ([0, 2, 1], 3, False), ([1, 0], 2, False),
    ([0, 1, 1], 3, False), ([], 0, True), ([0, 0], 1, True), ([0, 1, 3, 2], 4, False),
])
def test_first_seen_order_check(codes: list[int], count: int, expected: bool) -> None:
    from snapaudit.tables.columnar import _in_first_seen_order

    assert _in_first_seen_order(np.array(codes, dtype=np.int32), count) is expected
