"""Arrow tables (a Parquet file's columns) as the column tables, checked on columns.

pyarrow reads a Parquet table in parallel straight into typed columns; here they are coded
(``dictionary_encode``) into an :class:`AnswerTable`, a :class:`LabelTable` or the gold
mapping, with the checks the readers need (types, nulls, state names, repeats, the full grid,
non-blank answers). Anything off returns None, and the caller reads the rows one by one with
the checking reader, which names the row and the problem.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from snapaudit.tables.answertable import AnswerTable, coded_full_grid
from snapaudit.tables.decoded import STATE_NAME, per_row
from snapaudit.tables.labeltable import LabelTable, ref_sides
from snapaudit.tables.stepcolumn import step_rows
from snapaudit.tables.turns import MAX_TURNS, fits

Check = Callable[[pa.DataType], bool]


def _text(t: pa.DataType) -> bool:
    """A string, or a dictionary of strings (how a Parquet reader may hand them over)."""
    if pa.types.is_dictionary(t):
        t = t.value_type
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t))


def _texts(t: pa.DataType) -> bool:
    return bool((pa.types.is_list(t) or pa.types.is_large_list(t)) and _text(t.value_type))


def _ref(t: pa.DataType) -> bool:
    return bool(pa.types.is_struct(t) and sorted(t.field(i).name for i in range(t.num_fields))
                == ["repeat", "state"] and _text(t.field("state").type)
                and pa.types.is_integer(t.field("repeat").type))


def _steps(t: pa.DataType) -> bool:
    """A list of structs: the steps' fields are checked by
    :func:`snapaudit.tables.stepcolumn.step_rows`."""
    return bool(pa.types.is_list(t) and pa.types.is_struct(t.value_type))


Columns = Mapping[str, tuple[Check, bool]]  # column: its check, whether required
ANSWERS: Columns = {"question_id": (_text, True), "state": (_text, True),
                    "repeat": (pa.types.is_integer, True), "answer": (_text, True),
                    "doc_ids": (_texts, False), "question": (_text, False),
                    "steps": (_steps, False), "turn_answers": (_texts, False)}
LABELS: Columns = {"question_id": (_text, True), "a": (_ref, True), "b": (_ref, True),
                   "same": (pa.types.is_boolean, True), "judge": (_text, False)}
GOLD: Columns = {"question_id": (_text, True), "answers": (_texts, True)}
# the string columns a Parquet reader hands over as dictionaries (no string built per row)
DICTIONARY = ["question_id", "state", "answer", "question", "doc_ids.list.element", "judge",
              "a.state", "b.state", "answers.list.element"]


def conform(table: pa.Table, columns: Columns) -> dict[str, pa.ChunkedArray] | None:
    """Each column of ``table`` (required ones without nulls), or None when a column is
    unknown, missing, null where required or of another kind."""
    if not set(table.column_names) <= set(columns) or table.num_rows == 0:
        return None
    out: dict[str, pa.ChunkedArray] = {}
    for name, (check, required) in columns.items():
        if name not in table.column_names:
            if required:
                return None
            continue
        col = table.column(name)
        if not check(col.type) or (required and col.null_count):
            return None
        out[name] = col
    return out


def _numpy(column: pa.ChunkedArray) -> np.ndarray:
    """A column without nulls as one numpy array (its chunks joined by numpy, not copied
    twice by Arrow first)."""
    parts = [chunk.to_numpy(zero_copy_only=False) for chunk in column.chunks]
    return np.concatenate(parts) if len(parts) != 1 else parts[0]


def _codes(column: pa.ChunkedArray | pa.Array, first_seen: bool = True
           ) -> tuple[list[str], np.ndarray]:
    """(distinct values, each row's number among them; a null row gets 0), the values in
    order of first appearance as ``dictionary_encode`` gives them, also for a column that
    comes as a dictionary already (renumbered where its dictionary is in another order;
    ``first_seen=False``: left in the dictionary's order, unused values included)."""
    if isinstance(column, pa.Array):
        column = pa.chunked_array([column])
    enc = (column if pa.types.is_dictionary(column.type)
           else column.dictionary_encode()).unify_dictionaries()
    values = enc.chunk(0).dictionary.to_pylist() if enc.num_chunks else []
    codes = _numpy(pa.chunked_array([c.indices.fill_null(0) for c in enc.chunks],
                                    enc.type.index_type))
    if not first_seen:
        return values, codes
    used = codes if not enc.null_count else _numpy(pa.chunked_array(
        [c.indices.drop_null() for c in enc.chunks], enc.type.index_type))
    if _in_first_seen_order(used, len(values)):
        return values, codes
    first = np.unique(used, return_index=True)[1]  # by row of first appearance
    order = np.unique(used)[np.argsort(first, kind="stable")]
    rank = np.zeros(len(values), dtype=codes.dtype)
    rank[order] = np.arange(order.size)
    return [values[i] for i in order.tolist()], rank[codes]


def _in_first_seen_order(codes: np.ndarray, count: int) -> bool:
    """Whether ``codes`` use all of 0..count-1, each first appearing after the one before:
    their running maximum starts at 0 and only ever steps up by one, to count - 1."""
    if not codes.size:
        return count == 0
    peak = np.maximum.accumulate(codes)
    return bool(peak[0] == 0 and peak[-1] == count - 1
                and np.count_nonzero(peak[1:] != peak[:-1]) == count - 1)


def _optional_strings(column: pa.ChunkedArray) -> list[str | None]:
    values, idx = _codes(column)
    valid = _numpy(column.is_valid())
    obj = np.array([*values, None], dtype=object)
    idx = np.where(valid, idx, len(values))
    out: list[str | None] = obj[idx].tolist()
    return out


def _doc_tuples(col: pa.Array) -> list[tuple[str, ...] | None]:
    """Each row's doc ids as a tuple; equal lists share one tuple, equal ids one string.

    Lists of one length are told apart by their rows of id codes (hashed by pyarrow as
    fixed-size binary keys): only each distinct list is built in Python."""
    flat, idx = (_codes(col.values, first_seen=False) if len(col.values)
                 else ([], np.zeros(0, dtype=np.int32)))
    ids = np.array(flat, dtype=object)
    offsets = col.offsets.to_numpy()
    valid = col.is_valid().to_numpy(zero_copy_only=False)
    lengths = np.diff(offsets)
    out = np.full(len(col), None, dtype=object)
    for length in np.unique(lengths[valid]).tolist():
        rows = np.flatnonzero(valid & (lengths == length))
        if rows.size == len(col) and length:  # every list of this length: a matrix as is
            codes = idx[offsets[0]:offsets[-1]].reshape(-1, length)
        else:
            codes = idx[offsets[:-1][rows, None] + np.arange(length)]
        codes = codes.astype(np.int32, copy=False)
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
    # numbered in order of first appearance: each number first appears where the running
    # maximum of the numbers steps up (no sort)
    peak = np.maximum.accumulate(which)
    first = np.flatnonzero(np.concatenate(([True], peak[1:] != peak[:-1])))
    return first, which


def _column(cols: dict[str, pa.ChunkedArray], name: str, n: int, kind: pa.DataType
            ) -> pa.ChunkedArray:
    """The column ``name``, or n nulls of ``kind`` where the table leaves it out."""
    return cols[name] if name in cols else pa.chunked_array([pa.nulls(n, kind)])


def arrow_answers(table: pa.Table) -> AnswerTable | None:
    """The rows of a valid answers table (a full grid, no clusters), or None."""
    cols = conform(table, ANSWERS)
    if cols is None:
        return None
    n = table.num_rows
    docs_col = _column(cols, "doc_ids", n, pa.list_(pa.string())).combine_chunks()
    if docs_col.values.null_count:
        return None
    repeat = _numpy(cols["repeat"]).astype(np.int64, copy=False)
    qids, q = _codes(cols["question_id"])
    states, s = _codes(cols["state"])
    values, codes = _codes(cols["answer"])
    if repeat.min() < 1 or repeat.max() < 2 or not all(map(STATE_NAME.match, states)) \
            or not all(map(str.strip, values)):
        return None
    if not coded_full_grid(q, s, repeat, len(qids), len(states)):
        return None  # a duplicate or a hole in the grid
    steps = None
    if "steps" in cols and cols["steps"].null_count < n:  # a column of nulls: no steps
        steps = step_rows(cols["steps"], _text, _texts)
        if steps is None:
            return None
    question = _column(cols, "question", n, pa.string())
    answers = per_row(values, codes)
    turns = _turn_answers(cols["turn_answers"], answers) if "turn_answers" in cols else []
    if turns is None:
        return None
    return AnswerTable(qids, states, q, s, repeat, answers,
                       _doc_tuples(docs_col), _optional_strings(question),
                       (values, codes.astype(np.int64)), steps,
                       turns if any(t is not None for t in turns) else None)


def _turn_answers(column: pa.ChunkedArray, answers: list[str]
                  ) -> list[tuple[str, ...] | None] | None:
    """Each row's turn answers (None: the row has none), or None when one does not hold:
    1 to MAX_TURNS non-blank texts in bounds, the last the row's answer."""
    out = [None if t is None else tuple(t) for t in column.to_pylist()]
    ok = all(t is None or (0 < len(t) <= MAX_TURNS and None not in t and fits(t)
                           and t[-1] == a) for t, a in zip(out, answers, strict=True))
    return out if ok else None


def arrow_labels(table: pa.Table) -> LabelTable | None:
    """The labels of a well-formed labels table as a table, or None."""
    cols = conform(table, LABELS)
    if cols is None:
        return None
    sides = []
    for key in ("a", "b"):
        state, repeat = (pc.struct_field(cols[key], name) for name in ("state", "repeat"))
        if state.null_count or repeat.null_count:
            return None
        sides.append((state, _numpy(repeat)))
    if min(int(repeat.min()) for _, repeat in sides) < 1:
        return None
    if sides[0][0].type != sides[1][0].type:  # one side a dictionary, the other not
        sides = [(state.cast(pa.string()), repeat) for state, repeat in sides]
    n = table.num_rows
    qids, q = _codes(cols["question_id"])
    judges, j = _judges(_column(cols, "judge", n, pa.string()))
    states, s = _codes(pa.chunked_array(sides[0][0].chunks + sides[1][0].chunks,
                                        sides[0][0].type), first_seen=False)  # refs: sorted
    if not all(map(STATE_NAME.match, states)):
        return None
    coded = [(s[:n], sides[0][1]), (s[n:], sides[1][1])]
    del sides, s
    refs, (ia, ib) = ref_sides(states, coded)
    return LabelTable(qids, refs, judges, q, ia, ib, _numpy(cols["same"]), j)


def _judges(column: pa.ChunkedArray) -> tuple[list[str], np.ndarray]:
    """The judge column coded, a null or empty judge read as "default" (as the JSONL
    reader's ``or "default"``), in order of first appearance."""
    values, codes = _codes(pc.fill_null(column, "default"))
    names: dict[str, int] = {}
    rename = np.array([names.setdefault(v or "default", len(names)) for v in values],
                      dtype=np.int32)
    return list(names), rename[codes]


def arrow_gold(table: pa.Table) -> dict[str, tuple[str, ...]] | None:
    """Gold of a well-formed gold table (each question once, each with answers), or None."""
    cols = conform(table, GOLD)
    if cols is None:
        return None
    answers = cols["answers"].combine_chunks()
    if answers.values.null_count or pc.min(pc.list_value_length(answers)).as_py() < 1:
        return None
    qids = cols["question_id"].to_pylist()
    gold = dict(zip(qids, map(tuple, answers.to_pylist()), strict=True))
    return gold if len(gold) == len(qids) else None
