"""Parquet tables through pyarrow: answers, labels and gold in the JSONL formats' fields.

The columns are the JSONL fields (a label's ``a`` and ``b`` are structs ``{state, repeat}``;
``doc_ids`` and gold ``answers`` lists of strings); a column may be left out where the field
may, and a null is a field left out. A table is read whole, in parallel, into typed columns
(:mod:`snapaudit.tables.columnar`); one that does not vouch for itself is read again row by
row (:func:`parquet_records`) by the same checks as JSONL, whose errors name the file and
the row (1-based, where JSONL names the line). For tables over ~10^5 rows: no text to parse.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, Literal, ParamSpec, TypeVar

import pyarrow as pa
import pyarrow.parquet as pq

from snapaudit.atomic import replacing
from snapaudit.errors import InputError
from snapaudit.tables.answertable import AnswerTable
from snapaudit.tables.columnar import DICTIONARY, arrow_answers, arrow_gold, arrow_labels
from snapaudit.tables.jsonl import Source
from snapaudit.tables.labeltable import LabelTable
from snapaudit.tables.records import AnswerRow, GoldRow, PairLabel
from snapaudit.tables.steps import steps_record

P = ParamSpec("P")
R = TypeVar("R")
Kind = Literal["answers", "labels", "gold"]
_FAILURES = (pa.ArrowException, OSError, ValueError)
# a trajectory column: per row a list of steps (a null ``output``: none given)
STEPS = pa.list_(pa.struct([("tool", pa.string()), ("input", pa.string()),
                            ("doc_ids", pa.list_(pa.string())), ("output", pa.string())]))


def _released(read: Callable[P, R]) -> Callable[P, R]:
    """``read``, then pyarrow's allocator hands the freed memory of the table back to the
    system (mimalloc keeps it otherwise); the tables built from it are numpy and Python."""
    @functools.wraps(read)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return read(*args, **kwargs)
        finally:
            pa.default_memory_pool().release_unused()
    return wrapper


def _file(source: Source) -> str | pa.BufferReader:
    return pa.BufferReader(source) if isinstance(source, bytes) else str(source)


def _read(source: Source) -> pa.Table | None:
    try:  # strings as dictionaries, as Parquet stores them: no Python string per row
        return pq.read_table(_file(source), read_dictionary=DICTIONARY)
    except _FAILURES:
        return None  # the row reader names the problem


@_released
def parquet_answers(source: Source) -> AnswerTable | None:
    table = _read(source)
    return None if table is None else arrow_answers(table)


@_released
def parquet_labels(source: Source) -> LabelTable | None:
    table = _read(source)
    return None if table is None else arrow_labels(table)


@_released
def parquet_gold(source: Source) -> dict[str, tuple[str, ...]] | None:
    table = _read(source)
    return None if table is None else arrow_gold(table)


def parquet_records(source: Source, path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(row number, row without its nulls) of each row, batch by batch."""
    try:
        batches = pq.ParquetFile(_file(source)).iter_batches()
        number = 0
        for batch in batches:
            for row in batch.to_pylist():
                number += 1
                yield number, {k: v for k, v in row.items() if v is not None}
    except _FAILURES as exc:
        raise InputError(f"not a readable Parquet file: {exc}", path=str(path)) from None


LISTS = ("doc_ids", "doc_hashes", "turn_answers")  # the list-of-string fields of an answer row


def _answers(rows: Iterable[AnswerRow]) -> pa.Table:
    rows = list(rows)
    cols: dict[str, list[Any]] = {k: [getattr(r, k) for r in rows] for k in
                                  ("question_id", "state", "repeat", "answer")}
    for key in ("doc_ids", "question", "cluster", "doc_hashes", "steps", "turn_answers"):
        values = [getattr(r, key) for r in rows]
        if any(v is not None for v in values):  # as JSONL: a field no row has is left out
            cols[key] = [None if v is None else steps_record(v) if key == "steps"
                         else list(v) if key in LISTS else v for v in values]
    types = {"repeat": pa.int64(), "steps": STEPS, **{k: pa.list_(pa.string()) for k in LISTS}}
    return pa.table({k: pa.array(v, types.get(k, pa.string())) for k, v in cols.items()})


def _labels(labels: Iterable[PairLabel]) -> pa.Table:
    labels = list(labels)
    ref = pa.struct([("state", pa.string()), ("repeat", pa.int64())])
    return pa.table({
        "question_id": pa.array([lab.question_id for lab in labels], pa.string()),
        "a": pa.array([{"state": lab.a.state, "repeat": lab.a.repeat} for lab in labels], ref),
        "b": pa.array([{"state": lab.b.state, "repeat": lab.b.repeat} for lab in labels], ref),
        "same": pa.array([lab.same for lab in labels], pa.bool_()),
        "judge": pa.array([lab.judge for lab in labels], pa.string())})


def _gold(rows: Iterable[GoldRow]) -> pa.Table:
    rows = list(rows)
    return pa.table({"question_id": pa.array([r.question_id for r in rows], pa.string()),
                     "answers": pa.array([list(r.answers) for r in rows],
                                         pa.list_(pa.string()))})


def write_parquet(path: str | Path, table: Kind, rows: Iterable[Any]) -> None:
    """Write answers, labels or gold rows as a Parquet table (row order kept; zstd), through
    a temporary file renamed into place."""
    built = _answers(rows) if table == "answers" else _labels(rows) if table == "labels" \
        else _gold(rows)
    with replacing(path) as tmp:
        pq.write_table(built, str(tmp), compression="zstd")
