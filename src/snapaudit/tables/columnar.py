"""The fast path of the table readers: pyarrow's multithreaded JSON reader, checks on columns.

Chosen by measurement (docs/benchmarks.md): on 10^6 label lines pyarrow's reader parses about
7x faster than ``json.loads`` per line, 2x faster than orjson or msgspec, and yields columns,
not a Python object per line. It is only a fast path: any input it cannot vouch for (a parse
error, a wrong type, a missing or unknown field, a null inside a list, two objects on one line,
a blank line, invalid UTF-8, a duplicate, a hole in the grid) returns ``None``, and the caller
reads the file again line by line with the standard library, which names the file, the line
and the problem exactly as before.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable
from pathlib import Path
from typing import ParamSpec, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.json as pj

from snapaudit.tables.answertable import AnswerTable, coded_full_grid
from snapaudit.tables.labeltable import LabelTable, ref_sides

_REF = pa.struct([("state", pa.string()), ("repeat", pa.int64())])
ANSWER_SCHEMA = pa.schema([("question_id", pa.string()), ("state", pa.string()),
                           ("repeat", pa.int64()), ("answer", pa.string()),
                           ("doc_ids", pa.list_(pa.string())), ("question", pa.string())])
LABEL_SCHEMA = pa.schema([("question_id", pa.string()), ("a", _REF), ("b", _REF),
                          ("same", pa.bool_()), ("judge", pa.string())])
BLOCK = 1 << 24
P = ParamSpec("P")
R = TypeVar("R")
MIN_BLOCK = 1 << 20
_FAILURES = (pa.ArrowException, ValueError, UnicodeDecodeError, OverflowError, OSError)


def _released(read: Callable[P, R]) -> Callable[P, R]:
    """``read``, then pyarrow's allocator hands the freed memory of the parsed table back to
    the system (mimalloc keeps it otherwise: ~450 MB after 2M answers, before the labels'
    parse needs its own); the tables built from it are numpy arrays and Python objects."""
    @functools.wraps(read)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return read(*args, **kwargs)
        finally:
            pa.default_memory_pool().release_unused()
    return wrapper


def _segments(path: Path) -> int:
    """Newline-separated segments of the file (a last line without newline counts).

    Read block by block into one buffer and counted with numpy (faster than ``bytes.count``);
    not memory-mapped: a mapped 1.2 GB file counts in the process's peak RSS as it is read."""
    count, last = 0, b"\n"
    buf = bytearray(BLOCK)
    with open(path, "rb", buffering=0) as f:
        while got := f.readinto(buf):
            block = np.frombuffer(buf, dtype=np.uint8, count=got)
            count += int(np.count_nonzero(block == 10))
            del block  # no view of the buffer may outlive this block
            last = bytes(buf[got - 1:got])
    return count + (last != b"\n")


def _block_size(path: Path) -> int:
    """Blocks small enough that every core parses one (pyarrow parses blocks in parallel), at
    least 1 MiB and at most :data:`BLOCK`."""
    cores = os.cpu_count() or 1
    return min(BLOCK, max(MIN_BLOCK, -(-path.stat().st_size // (2 * cores))))


def _parse(path: Path, schema: pa.Schema, block: int) -> pa.Table:
    table = pj.read_json(path, read_options=pj.ReadOptions(block_size=block),
                         parse_options=pj.ParseOptions(explicit_schema=schema,
                                                       unexpected_field_behavior="error"))
    table.validate(full=True)  # UTF-8 of every string
    return table


def _read(path: str | Path, schema: pa.Schema) -> pa.Table | None:
    path = Path(path)
    try:
        block = _block_size(path)
        try:
            table = _parse(path, schema, block)
        except pa.ArrowInvalid as exc:
            if block >= BLOCK or "straddl" not in str(exc):
                raise
            table = _parse(path, schema, BLOCK)  # a line longer than the small blocks
    except _FAILURES:
        return None
    if table.num_rows == 0 or table.num_rows != _segments(path):
        return None  # blank lines or several objects on a line: let the line reader judge
    return table


def _codes(column: pa.ChunkedArray | pa.Array) -> tuple[list[str], np.ndarray]:
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    enc = column.dictionary_encode()
    idx = enc.indices.fill_null(0) if enc.indices.null_count else enc.indices
    return enc.dictionary.to_pylist(), idx.to_numpy(zero_copy_only=False)


def _no_nulls(table: pa.Table, names: tuple[str, ...]) -> bool:
    return all(table.column(n).null_count == 0 for n in names)


@_released
def fast_answers(path: str | Path) -> AnswerTable | None:
    """The rows of a valid answers file (a full grid), or None when anything needs a look."""
    table = _read(path, ANSWER_SCHEMA)
    if table is None or not _no_nulls(table, ("question_id", "state", "repeat", "answer")):
        return None
    docs_col = table.column("doc_ids").combine_chunks()
    if docs_col.values.null_count:
        return None
    repeat = table.column("repeat").to_numpy()
    if repeat.min() < 1 or repeat.max() < 2:
        return None
    qids, q = _codes(table.column("question_id"))
    states, s = _codes(table.column("state"))
    if not coded_full_grid(q, s, repeat, len(qids), len(states)):
        return None  # a duplicate or a hole in the grid
    values, codes = _codes(table.column("answer"))
    return AnswerTable(qids, states, q, s, repeat, table.column("answer").to_pylist(),
                       _doc_tuples(docs_col), _optional_strings(table.column("question")),
                       (values, codes.astype(np.int64)))


def _optional_strings(column: pa.ChunkedArray) -> list[str | None]:
    values, idx = _codes(column)
    valid = column.combine_chunks().is_valid().to_numpy(zero_copy_only=False)
    obj = np.array([*values, None], dtype=object)
    idx = np.where(valid, idx, len(values))
    out: list[str | None] = obj[idx].tolist()
    return out


def _doc_tuples(col: pa.Array) -> list[tuple[str, ...] | None]:
    """Each row's doc ids as a tuple; equal lists share one tuple, equal ids one string.

    Lists of one length are told apart by their rows of id codes (hashed by pyarrow as
    fixed-size binary keys): only each distinct list is built in Python."""
    flat, idx = _codes(col.values) if len(col.values) else ([], np.zeros(0, dtype=np.int64))
    ids = np.array(flat, dtype=object)
    offsets = col.offsets.to_numpy()
    valid = col.is_valid().to_numpy(zero_copy_only=False)
    lengths = np.diff(offsets)
    out = np.full(len(col), None, dtype=object)
    for length in np.unique(lengths[valid]).tolist():
        rows = np.flatnonzero(valid & (lengths == length))
        codes = idx[offsets[:-1][rows, None] + np.arange(length)].astype(np.int32)
        first, which = _distinct_rows(codes)
        distinct = np.empty(len(first), dtype=object)
        for k, row in enumerate(ids[codes[first]].tolist() if length else [[]] * len(first)):
            distinct[k] = tuple(row)
        out[rows] = distinct[which]
    tuples: list[tuple[str, ...] | None] = out.tolist()
    return tuples


def _distinct_rows(codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(first row of each distinct row of ``codes``, each row's distinct-row number)."""
    n, width = codes.shape
    if width == 0:
        return np.zeros(min(n, 1), dtype=np.int64), np.zeros(n, dtype=np.int64)
    keys = pa.FixedSizeBinaryArray.from_buffers(
        pa.binary(codes.itemsize * width), n,
        [None, pa.py_buffer(np.ascontiguousarray(codes).tobytes())])
    which = keys.dictionary_encode().indices.to_numpy().astype(np.int64)
    first: np.ndarray = np.unique(which, return_index=True)[1]
    return first, which


@_released
def fast_labels(path: str | Path) -> LabelTable | None:
    """The labels of a well-formed labels file as a table, or None (see the module doc)."""
    table = _read(path, LABEL_SCHEMA)
    if table is None or not _no_nulls(table, ("question_id", "a", "b", "same")):
        return None
    parts = []
    for key in ("a", "b"):
        col = table.column(key).combine_chunks()
        state, repeat = col.field("state"), col.field("repeat")
        if state.null_count or repeat.null_count:
            return None
        parts.append((state, repeat.to_numpy()))
    if min(int(parts[0][1].min()), int(parts[1][1].min())) < 1:
        return None
    qids, q = _codes(table.column("question_id"))
    judge_col = pc.fill_null(table.column("judge"), "default")
    judge_col = pc.if_else(pc.equal(judge_col, ""), "default", judge_col)  # as `or "default"`
    judges, j = _codes(judge_col)
    # refs: (state, repeat) of both sides coded together
    states, s = _codes(pa.chunked_array([parts[0][0], parts[1][0]]))
    n = table.num_rows
    sides = [(s[:n], parts[0][1]), (s[n:], parts[1][1])]
    del parts, s
    refs, (ia, ib) = ref_sides(states, sides)
    same = table.column("same").to_numpy()
    return LabelTable(qids, refs, judges, q, ia, ib, same, j)


GOLD_SCHEMA = pa.schema([("question_id", pa.string()), ("answers", pa.list_(pa.string()))])


@_released
def fast_gold(path: str | Path) -> dict[str, tuple[str, ...]] | None:
    """Gold of a well-formed snapaudit gold JSONL file, or None (see the module doc)."""
    table = _read(path, GOLD_SCHEMA)
    if table is None or not _no_nulls(table, ("question_id", "answers")):
        return None
    answers = table.column("answers").combine_chunks()
    if answers.values.null_count or pc.min(pc.list_value_length(answers)).as_py() < 1:
        return None
    qids = table.column("question_id").to_pylist()
    gold = dict(zip(qids, map(tuple, answers.to_pylist()), strict=True))
    return gold if len(gold) == len(qids) else None
