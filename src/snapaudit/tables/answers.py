"""Reading, validating and writing answer tables: JSONL (msgspec) or Parquet (pyarrow).

Both formats are read into the same columns (:class:`AnswerTable`) when the rows vouch for
themselves; anything else is read again record by record with the checks below, whose error
names the file, the line (a Parquet table: the row) and the cause.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, Literal, TypeVar

from snapaudit.errors import InputError
from snapaudit.tables.decoded import STATE_NAME, answer_table
from snapaudit.tables.jsonl import Declined, Source, json_objects, source_of
from snapaudit.tables.records import AnswerRef, AnswerRow, Step
from snapaudit.tables.steps import StepsError, parse_steps, steps_record
from snapaudit.tables.turns import TurnsError, check_final, parse_texts

GOLD_FORMATS = ("auto", "jsonl", "nq-open", "triviaqa-dpr")
PARQUET_MAGIC = b"PAR1"
R = TypeVar("R")


def _state(value: str, key: str, where: dict[str, Any]) -> str:
    if not STATE_NAME.match(value):
        raise InputError(f"{key} {value!r} is not a valid state name (letters, digits, '_', "
                         "'.', '-' only)", **where)
    return value


def is_parquet(source: Source) -> bool:
    """Whether ``source`` starts as a Parquet file does."""
    if isinstance(source, bytes):
        return source[:4] == PARQUET_MAGIC
    try:
        with open(source, "rb") as f:
            return f.read(4) == PARQUET_MAGIC
    except OSError:
        return False


def records(source: Source, path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) of a JSONL table, or (row number, row) of a Parquet table (a
    null is a field left out): what the checking readers below go through."""
    if is_parquet(source):
        from snapaudit.tables.parquet import parquet_records

        return parquet_records(source, path)
    return json_objects(source, path)


def _json_objects(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """:func:`snapaudit.tables.jsonl.json_objects` of the file at ``path``."""
    return json_objects(source_of(path), path)


def _field(obj: dict[str, Any], key: str, kind: type | tuple[type, ...], where: dict[str, Any],
           *, optional: bool = False) -> Any:
    if key not in obj:
        if optional:
            return None
        raise InputError(f"missing field {key!r}", **where)
    value = obj[key]
    if optional and value is None:
        return None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        name = kind.__name__ if isinstance(kind, type) else "/".join(k.__name__ for k in kind)
        raise InputError(f"field {key!r} must be {name}, got {type(value).__name__}", **where)
    return value


def _str_list(obj: dict[str, Any], key: str, where: dict[str, Any], *,
              optional: bool = False) -> tuple[str, ...] | None:
    value = _field(obj, key, list, where, optional=optional)
    if value is None:
        return None
    if not all(isinstance(v, str) for v in value):
        raise InputError(f"field {key!r} must be a list of strings", **where)
    return tuple(value)


def _steps(obj: dict[str, Any], where: dict[str, Any]) -> tuple[Step, ...] | None:
    value = obj.get("steps")
    if value is None:
        return None
    try:
        return parse_steps(value)
    except StepsError as exc:
        raise InputError(str(exc), **where) from None


def _turn_answers(obj: dict[str, Any], where: dict[str, Any]) -> tuple[str, ...] | None:
    value = obj.get("turn_answers")
    if value is None:
        return None
    try:
        texts = parse_texts(value, "turn_answers")
        check_final(texts, obj.get("answer"))
    except TurnsError as exc:
        raise InputError(str(exc), **where) from None
    return texts


def _unknown_keys(obj: dict[str, Any], allowed: set[str], where: dict[str, Any]) -> None:
    extra = sorted(set(obj) - allowed)
    if extra:
        raise InputError(f"unknown field(s): {', '.join(extra)}", **where)


def _ref(value: Any, key: str, where: dict[str, Any]) -> AnswerRef:
    if not isinstance(value, dict):
        raise InputError(f"field {key!r} must be an object {{state, repeat}}", **where)
    _unknown_keys(value, {"state", "repeat"}, where)
    state = _state(_field(value, "state", str, where), f"{key}.state", where)
    repeat = _field(value, "repeat", int, where)
    if repeat < 1:
        raise InputError(f"{key}.repeat must be >= 1 (repeats are 1-based), got {repeat}",
                         **where)
    return AnswerRef(state, repeat)


def _cached_ref(refs: dict[tuple[str, int], AnswerRef], value: Any, key: str,
                where: dict[str, Any]) -> AnswerRef:
    """:func:`_ref`, once per distinct well-formed {state, repeat} (a label file names few)."""
    if type(value) is dict and len(value) == 2:
        state, repeat = value.get("state"), value.get("repeat")
        if type(state) is str and type(repeat) is int:
            hit = refs.get((state, repeat))
            if hit is not None:
                return hit
    ref = _ref(value, key, where)
    refs[(ref.state, ref.repeat)] = ref
    return ref


# -- answers -----------------------------------------------------------------

def read_answers(path: str | Path, *, fast: bool | None = None) -> Sequence[AnswerRow]:
    """Read and validate an answers table (JSONL or Parquet, see docs/analysis.md): an
    :class:`AnswerTable` (the rows kept as columns) when every row decodes and they form a
    full grid without clusters, else a list (``fast=False``: always the list, from the
    checking reader)."""
    source = source_of(path)
    if fast is not False:
        table = _answer_table(source)
        if table is not None:
            return table
    return _checked_answers(source, path)


def _answer_table(source: Source) -> Sequence[AnswerRow] | None:
    if is_parquet(source):
        from snapaudit.tables.parquet import parquet_answers

        return parquet_answers(source)
    if isinstance(source, Path):  # the writers' layouts, parsed with numpy
        from snapaudit.tables.templateanswers import template_answers

        table = template_answers(source)
        if table is not None and all(map(STATE_NAME.match, table.states)) \
                and all(map(str.strip, table.answer_codes[0])):
            return table
    try:
        return answer_table(source)
    except Declined:
        return None


def _checked_answers(source: Source, path: str | Path) -> list[AnswerRow]:
    """The rows of ``source`` record by record, each checked; the first problem raises."""
    rows: list[AnswerRow] = []
    lines: dict[tuple[str, str, int], int] = {}
    allowed = set(AnswerRow.__match_args__)  # every field of a row
    for number, obj in records(source, path):
        where: dict[str, Any] = {"path": str(path), "line": number}
        _unknown_keys(obj, allowed, where)
        row = AnswerRow(
            question_id=_field(obj, "question_id", str, where),
            state=_state(_field(obj, "state", str, where), "state", where),
            repeat=_field(obj, "repeat", int, where),
            answer=_field(obj, "answer", str, where),
            doc_ids=_str_list(obj, "doc_ids", where, optional=True),
            question=_field(obj, "question", str, where, optional=True),
            cluster=_field(obj, "cluster", str, where, optional=True),
            doc_hashes=_str_list(obj, "doc_hashes", where, optional=True),
            steps=_steps(obj, where),
            turn_answers=_turn_answers(obj, where),
        )
        hashes, ids = row.doc_hashes, row.doc_ids
        if hashes is not None and (ids is None or len(hashes) != len(ids)):
            raise InputError("field 'doc_hashes' must hold one hash per entry of 'doc_ids'",
                             **where)
        if not row.answer.strip():
            raise InputError("empty answer: an answer must have at least one non-space "
                             "character (a system that gave no answer is a failed call, "
                             "not an answer)", **where)
        if row.repeat < 1:
            raise InputError(f"repeat must be >= 1 (repeats are 1-based), got {row.repeat}",
                             **where)
        key = (row.question_id, row.state, row.repeat)
        if key in lines:
            raise InputError(
                f"duplicate row for question {row.question_id!r}, state {row.state!r}, "
                f"repeat {row.repeat} (first at line {lines[key]})", **where)
        lines[key] = number
        rows.append(row)
    validate_answers(rows, path=str(path), lines=lines)
    return rows


def validate_answers(rows: Sequence[AnswerRow], *, path: str | None = None,
                     lines: dict[tuple[str, str, int], int] | None = None) -> None:
    """Check that ``rows`` form a full grid: every question has every state of the table,
    each with the same repeats 1..r, r >= 2, and no duplicates."""
    if not rows:
        raise InputError("no answer rows", path=path)
    seen: dict[tuple[str, str, int], int] = {}
    by_q: dict[str, dict[str, set[int]]] = {}
    for index, row in enumerate(rows):
        key = (row.question_id, row.state, row.repeat)
        line = lines.get(key) if lines else None
        if key in seen and lines is None:
            raise InputError(f"duplicate row for question {row.question_id!r}, state "
                             f"{row.state!r}, repeat {row.repeat} (rows {seen[key] + 1} and "
                             f"{index + 1})", path=path, line=line)
        seen[key] = index
        by_q.setdefault(row.question_id, {}).setdefault(row.state, set()).add(row.repeat)
    states = sorted({row.state for row in rows})
    repeats = max(max(r) for q in by_q.values() for r in q.values())
    first_lines = _first_lines(lines)
    if repeats < 2:
        raise InputError(f"fewer than 2 repeats per state (found {repeats}); within-state "
                         "agreement needs at least 2", path=path)
    expected = set(range(1, repeats + 1))
    for qid, per_state in by_q.items():
        first = first_lines.get(qid)
        missing_states = [s for s in states if s not in per_state]
        if missing_states:
            raise InputError(f"question {qid!r} is missing state(s) {', '.join(missing_states)}",
                             path=path, line=first)
        for state, got in per_state.items():
            if got != expected:
                gap = sorted(expected - got) or sorted(got - expected)
                raise InputError(f"question {qid!r}, state {state!r} has repeats {sorted(got)}; "
                                 f"expected 1..{repeats} (problem: {gap})", path=path,
                                 line=first)


def _first_lines(lines: dict[tuple[str, str, int], int] | None) -> dict[str, int]:
    """The first line of every question, in one pass."""
    first: dict[str, int] = {}
    for (q, _, _), n in (lines or {}).items():
        if n < first.get(q, n + 1):
            first[q] = n
    return first


def write_answers(path: str | Path, rows: Iterable[AnswerRow]) -> None:
    """Write answers JSONL (sorted keys, UTF-8, one row per line, order kept), or Parquet
    when ``path`` ends in ``.parquet``."""
    write_table(path, "answers", rows, answer_record)


def write_table(path: str | Path, kind: Literal["answers", "labels", "gold"],
                rows: Iterable[R], record: Callable[[R], dict[str, Any]]) -> None:
    """Write ``rows`` as JSONL (each ``record(row)`` on its line, keys sorted), or as Parquet
    when ``path`` ends in ``.parquet`` (:func:`snapaudit.tables.parquet.write_parquet`)."""
    if Path(path).suffix == ".parquet":
        from snapaudit.tables.parquet import write_parquet

        write_parquet(path, kind, rows)
        return
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            f.write(json.dumps(record(row), ensure_ascii=False, sort_keys=True) + "\n")


def answer_record(row: AnswerRow) -> dict[str, Any]:
    """The row as its JSON object: the optional fields only when set."""
    obj: dict[str, Any] = {"question_id": row.question_id, "state": row.state,
                           "repeat": row.repeat, "answer": row.answer}
    if row.doc_ids is not None:
        obj["doc_ids"] = list(row.doc_ids)
    if row.question is not None:
        obj["question"] = row.question
    if row.cluster is not None:
        obj["cluster"] = row.cluster
    if row.doc_hashes is not None:
        obj["doc_hashes"] = list(row.doc_hashes)
    if row.steps is not None:
        obj["steps"] = steps_record(row.steps)
    if row.turn_answers is not None:
        obj["turn_answers"] = list(row.turn_answers)
    return obj
