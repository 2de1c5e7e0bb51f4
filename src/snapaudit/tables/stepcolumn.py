"""A Parquet ``steps`` column (``list<struct<tool, input, doc_ids, output>>``) as each row's
:class:`~snapaudit.tables.records.Step` records, read field by field.

pyarrow hands over each field of the flattened steps as one array (no Python dict per
step); the bounds of :mod:`snapaudit.tables.steps` are checked on those arrays (nulls,
lengths, ids per step, steps per row, text per row) and the tool names in Python (the same
``str.strip`` as the checking reader). Anything in doubt returns None, and the caller reads
the rows one by one with the checking reader, which names the row and the problem.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from snapaudit.tables.records import MAX_STEP_DOC_IDS, MAX_TOOL_CHARS, Step
from snapaudit.tables.steps import MAX_STEPS, MAX_STEPS_BYTES

Check = Callable[[pa.DataType], bool]


def step_rows(column: pa.ChunkedArray, text: Check, texts: Check
              ) -> list[tuple[Step, ...] | None] | None:
    """Each row's steps (None for a null row), or None when a step does not hold. ``text``
    and ``texts``: the checks of a string and a list-of-strings column type."""
    col = column.combine_chunks()
    flat = col.values
    kinds = {flat.type.field(i).name: flat.type.field(i).type
             for i in range(flat.type.num_fields)}
    checks = {"tool": text, "input": text, "doc_ids": texts, "output": text}
    if flat.null_count or not {"tool", "input"} <= set(kinds) <= set(checks) \
            or not all(checks[name](kind) for name, kind in kinds.items()):
        return None
    fields = dict(zip(kinds, flat.flatten(), strict=True))  # the struct's offset applied
    tool, given = fields["tool"], fields["input"]
    ids, output = fields.get("doc_ids"), fields.get("output")
    if tool.null_count or given.null_count or (ids is not None and (
            ids.null_count or ids.values.null_count)):
        return None
    offsets = col.offsets.to_numpy()
    if len(flat) and not _within(offsets, tool, given, ids, output):
        return None
    tools = tool.to_pylist()
    if not all(map(str.strip, tools)) or max(map(len, tools), default=0) > MAX_TOOL_CHARS:
        return None
    id_lists = ids.to_pylist() if ids is not None else [[]] * len(flat)
    outputs = output.to_pylist() if output is not None else [None] * len(flat)
    steps = [Step(t, i, tuple(d), o) for t, i, d, o
             in zip(tools, given.to_pylist(), id_lists, outputs, strict=True)]
    valid = col.is_valid().to_numpy(zero_copy_only=False)
    starts = offsets.tolist()
    return [tuple(steps[starts[r]:starts[r + 1]]) if valid[r] else None
            for r in range(len(col))]


def _within(offsets: np.ndarray, tool: pa.Array, given: pa.Array, ids: pa.Array | None,
            output: pa.Array | None) -> bool:
    """Steps per row, ids per step and UTF-8 bytes of text per row within the bounds."""
    if int(np.diff(offsets).max(initial=0)) > MAX_STEPS:
        return False
    size = _bytes(tool) + _bytes(given)
    if output is not None:
        size += _bytes(output)
    if ids is not None:
        per_id = _bytes(ids.values)
        id_offsets = ids.offsets.to_numpy()
        if int(np.diff(id_offsets).max(initial=0)) > MAX_STEP_DOC_IDS:
            return False
        size += _segment_sums(per_id, id_offsets)
    return bool(_segment_sums(size, offsets).max(initial=0) <= MAX_STEPS_BYTES)


def _bytes(array: pa.Array) -> np.ndarray:
    """UTF-8 bytes of each string (0 for a null)."""
    return np.asarray(pc.fill_null(pc.binary_length(array), 0).to_numpy(), dtype=np.int64)


def _segment_sums(values: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """The sum of each ``values[offsets[k]:offsets[k + 1]]`` (0 for an empty segment)."""
    total = np.concatenate(([0], np.cumsum(values, dtype=np.int64)))
    out: np.ndarray = total[offsets[1:]] - total[offsets[:-1]]
    return out
