"""Reading, validating and writing answer and label tables (JSONL, errors with file:line)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from snapaudit.errors import InputError
from snapaudit.tables.labeltable import LabelTable
from snapaudit.tables.quicklabels import STATE_NAME, quick_labels
from snapaudit.tables.records import AnswerRef, AnswerRow, PairLabel

GOLD_FORMATS = ("auto", "jsonl", "nq-open", "triviaqa-dpr")
# files below this are read line by line: the line reader finishes before pyarrow (the fast
# reader's) import would (docs/benchmarks.md, "Reading tables")
FAST_MIN_BYTES = 1 << 20
# labels below this are read by tables.quicklabels (columns from each line, no pyarrow)
LABELS_FAST_MIN_BYTES = 8 << 20


def _state(value: str, key: str, where: dict[str, Any]) -> str:
    if not STATE_NAME.match(value):
        raise InputError(f"{key} {value!r} is not a valid state name (letters, digits, '_', "
                         "'.', '-' only)", **where)
    return value


def _lines(path: str | Path) -> Iterator[tuple[int, str]]:
    """(1-based line number, text) of every non-blank line; non-UTF-8 anywhere is an error."""
    data = Path(path).read_bytes()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"not valid UTF-8 ({exc.reason} at byte {exc.start})",
                         path=str(path), line=line) from None
    text = text.removeprefix("\ufeff")  # a UTF-8 byte-order mark is accepted and dropped
    for number, line_text in enumerate(text.split("\n"), start=1):
        if line_text.strip():
            yield number, line_text.removesuffix("\r")


def _json_objects(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    for number, text in _lines(path):
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"not valid JSON: {exc}", path=str(path), line=number) from None
        if not isinstance(obj, dict):
            raise InputError("expected a JSON object", path=str(path), line=number)
        yield number, obj


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

def use_fast_reader(path: str | Path, fast: bool | None = None,
                    min_bytes: int = FAST_MIN_BYTES) -> bool:
    """Whether to try the fast reader (:mod:`snapaudit.tables.columnar`, pyarrow): ``fast``,
    or when None, whether ``path`` is a regular file of at least ``min_bytes``
    (below that, the line reader finishes before pyarrow is imported)."""
    if fast is not None:
        return fast
    return _regular_size(path) >= min_bytes


def use_template_reader(path: str | Path, fast: bool | None = None) -> bool:
    """Whether to try the numpy template readers (:mod:`snapaudit.tables.templaterows`):
    ``fast``, or when None, whether ``path`` is a non-empty regular file of any size (they
    import nothing beyond numpy and size their buffer to the file: 3-4 ms on a 400-question
    table, against 20-25 ms for the line readers; a pipe is read once only, by the line
    reader)."""
    if fast is not None:
        return fast
    return _regular_size(path) > 0


def _regular_size(path: str | Path) -> int:
    """The size of a regular file, -1 for anything else (a pipe is read once only)."""
    try:
        st = os.stat(path)
    except OSError:
        return -1
    return st.st_size if stat.S_ISREG(st.st_mode) else -1


def read_answers(path: str | Path, *, fast: bool | None = None) -> Sequence[AnswerRow]:
    """Read and validate an answers JSONL file (see docs/analysis.md): a list, or an
    :class:`AnswerTable` (the same rows, kept as columns) when the fast reader vouches
    (tried as :func:`use_fast_reader` says)."""
    if use_template_reader(path, fast):
        from snapaudit.tables.templateanswers import template_answers

        table = template_answers(path)  # the usual layouts, without pyarrow's import or parse
        if table is None and use_fast_reader(path, fast):
            from snapaudit.tables.columnar import fast_answers

            table = fast_answers(path)
        if table is not None and all(STATE_NAME.match(s) for s in table.states) \
                and all(a.strip() for a in table.answer_codes[0]):  # each distinct answer
            return table  # else the line-by-line reader below names the bad line
    rows: list[AnswerRow] = []
    lines: dict[tuple[str, str, int], int] = {}
    allowed = set(AnswerRow.__match_args__)  # every field of a row
    for number, obj in _json_objects(path):
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
    """Write answers JSONL (sorted keys, UTF-8, one row per line, order kept)."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for row in rows:
            obj: dict[str, Any] = {"question_id": row.question_id, "state": row.state,
                                   "repeat": row.repeat, "answer": row.answer}
            for key in ("doc_ids", "question", "cluster", "doc_hashes"):
                value = getattr(row, key)
                if value is not None:
                    obj[key] = list(value) if isinstance(value, tuple) else value
            f.write(json.dumps(obj, ensure_ascii=False, sort_keys=True) + "\n")


# -- labels ------------------------------------------------------------------

def parse_labels(path: str | Path, fast: bool | None = None) -> LabelTable | None:
    """The labels file as a table from a fast reader, not yet checked against the answers;
    None when the line reader must judge it (the fast reader tried as
    :func:`use_fast_reader` says; small files by :mod:`snapaudit.tables.quicklabels`)."""
    if use_template_reader(path, fast):
        from snapaudit.tables.templatelabels import template_labels

        table = template_labels(path)  # the usual layouts, without pyarrow's import or parse
        if table is not None:
            return table
    if use_fast_reader(path, fast, LABELS_FAST_MIN_BYTES):
        from snapaudit.tables.columnar import fast_labels

        return fast_labels(path)
    return quick_labels(path) if fast is None and _regular_size(path) > 0 else None


def read_labels(path: str | Path, answers: Sequence[AnswerRow] | None = None, *,
                fast: bool | None = None,
                parsed: Callable[[], LabelTable | None] | None = None) -> LabelTable:
    """Read pair labels JSONL; with ``answers``, also check every label names a known answer.
    ``parsed`` gives :func:`parse_labels`' result when it was started elsewhere (e.g. beside
    the answers' read: :func:`snapaudit.tables.reading.read_tables`)."""
    table = parsed() if parsed is not None else parse_labels(path, fast)
    if table is not None and table.clean(answers):
        return table
    labels: list[PairLabel] = []
    seen: dict[tuple[str, str, AnswerRef, AnswerRef], int] = {}
    known = {(r.question_id, AnswerRef(r.state, r.repeat)) for r in answers} if answers else None
    refs: dict[tuple[str, int], AnswerRef] = {}
    for number, obj in _json_objects(path):
        where: dict[str, Any] = {"path": str(path), "line": number}
        _unknown_keys(obj, {"question_id", "a", "b", "same", "judge"}, where)
        qid = _field(obj, "question_id", str, where)
        for key in ("a", "b"):
            if key not in obj:
                raise InputError(f"missing field {key!r}", **where)
        label = PairLabel(qid, _cached_ref(refs, obj["a"], "a", where),
                          _cached_ref(refs, obj["b"], "b", where),
                          _field(obj, "same", bool, where),
                          _field(obj, "judge", str, where, optional=True) or "default")
        _check_label(label, known, seen, number, where)
        labels.append(label)
    return LabelTable.from_labels(labels)


def _check_label(label: PairLabel, known: set[tuple[str, AnswerRef]] | None,
                 seen: dict[tuple[str, str, AnswerRef, AnswerRef], int], number: int,
                 where: dict[str, Any]) -> None:
    if label.a == label.b:
        raise InputError(f"label pairs answer {label.a.state}/{label.a.repeat} of question "
                         f"{label.question_id!r} with itself", **where)
    if known is not None:
        for ref in (label.a, label.b):
            if (label.question_id, ref) not in known:
                raise InputError(f"label names an unknown answer: question "
                                 f"{label.question_id!r}, state {ref.state!r}, repeat "
                                 f"{ref.repeat}", **where)
    key = (label.judge, label.question_id, *sorted((label.a, label.b)))
    if key in seen:
        raise InputError(f"duplicate label from judge {label.judge!r} for question "
                         f"{label.question_id!r}, pair {label.a.state}/{label.a.repeat}-"
                         f"{label.b.state}/{label.b.repeat} (first at line {seen[key]})", **where)
    seen[key] = number  # type: ignore[index]


def validate_labels(labels: Sequence[PairLabel], answers: Sequence[AnswerRow],
                    *, path: str | None = None) -> None:
    """Every label names a known answer, no self pairs, no duplicate (judge, pair)."""
    if isinstance(labels, LabelTable) and labels.clean(answers):
        return
    known = {(r.question_id, AnswerRef(r.state, r.repeat)) for r in answers}
    seen: dict[tuple[str, str, AnswerRef, AnswerRef], int] = {}
    for index, label in enumerate(labels, start=1):
        _check_label(label, known, seen, index, {"path": path, "line": index})


def write_labels(path: str | Path, labels: Iterable[PairLabel]) -> None:
    """Write pair labels JSONL (the judge is always written)."""
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for lab in labels:
            obj = {"question_id": lab.question_id,
                   "a": {"state": lab.a.state, "repeat": lab.a.repeat},
                   "b": {"state": lab.b.state, "repeat": lab.b.repeat},
                   "same": lab.same, "judge": lab.judge}
            f.write(json.dumps(obj, ensure_ascii=False, sort_keys=True) + "\n")


# -- gold --------------------------------------------------------------------
