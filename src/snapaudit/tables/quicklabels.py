"""Labels files too small for pyarrow: columns straight from each line's JSON object.

The full line reader (:func:`snapaudit.tables.answers.read_labels`) builds a
:class:`PairLabel` per line and checks it field by field, with file and line in every error;
pyarrow's import alone costs more than a small file's whole read. This reader parses each
line (orjson when installed, else the standard library) and codes question, refs and judge
into the columns of a :class:`LabelTable`, in the first-appearance order the full reader's
``LabelTable.from_labels`` gives. It vouches only for well-formed lines: anything else (bad
UTF-8, a line that is not an object, an unknown or missing field, a wrong type, a bad state
name, a repeat below 1) returns None, and the full reader then raises its error as before.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from snapaudit.tables.labeltable import LabelTable
from snapaudit.tables.records import AnswerRef

STATE_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")  # as in the protocol's states.order
_KEYS = frozenset({"question_id", "a", "b", "same", "judge"})


def _loader() -> tuple[Callable[[str], Any], tuple[type[Exception], ...]]:
    try:
        import orjson
    except ImportError:  # pragma: no cover - orjson is optional
        return json.loads, (ValueError,)
    return orjson.loads, (orjson.JSONDecodeError, ValueError)


def quick_labels(path: str | Path) -> LabelTable | None:
    """The labels of a well-formed file as a table, or None (see the module doc)."""
    try:
        text = Path(path).read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    loads, failures = _loader()
    questions: dict[str, int] = {}
    refs: dict[tuple[str, int], int] = {}
    judges: dict[str, int] = {}
    cols: list[list[int]] = [[], [], [], [], []]
    q_of, j_of = questions.setdefault, judges.setdefault
    for line in text.removeprefix("\ufeff").split("\n"):
        if not line.strip():
            continue
        try:
            obj = loads(line)
        except failures:
            return None
        if type(obj) is not dict or not {"question_id", "a", "b", "same"} <= obj.keys() <= _KEYS:
            return None
        qid, same, judge = obj["question_id"], obj["same"], obj.get("judge")
        if type(qid) is not str or type(same) is not bool or (
                judge is not None and type(judge) is not str):
            return None
        codes = []
        for side in (obj["a"], obj["b"]):
            if type(side) is not dict or len(side) != 2:
                return None
            state, repeat = side.get("state"), side.get("repeat")
            if type(state) is not str or type(repeat) is not int:
                return None
            key = (state, repeat)
            code = refs.get(key)
            if code is None:
                if repeat < 1 or not STATE_NAME.match(state):
                    return None
                code = refs[key] = len(refs)
            codes.append(code)
        cols[0].append(q_of(qid, len(questions)))
        cols[1].append(codes[0])
        cols[2].append(codes[1])
        cols[3].append(same)
        cols[4].append(j_of(judge or "default", len(judges)))
    if not cols[0]:
        return None
    return LabelTable(list(questions), [AnswerRef(s, r) for s, r in refs],
                      list(judges), np.array(cols[0], dtype=np.int32),
                      np.array(cols[1], dtype=np.int32), np.array(cols[2], dtype=np.int32),
                      np.array(cols[3], dtype=np.bool_), np.array(cols[4], dtype=np.int32))
