"""Reading, validating and writing pair-label tables: JSONL (msgspec) or Parquet (pyarrow)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from snapaudit.errors import InputError
from snapaudit.tables.answers import (
    _cached_ref,
    _field,
    _unknown_keys,
    is_parquet,
    records,
    write_table,
)
from snapaudit.tables.decoded import label_table
from snapaudit.tables.jsonl import Declined, regular, source_of
from snapaudit.tables.labeltable import LabelTable
from snapaudit.tables.records import AnswerRef, AnswerRow, PairLabel


def parse_labels(path: str | Path, fast: bool | None = None) -> LabelTable | None:
    """The labels table as columns (JSONL through msgspec, Parquet through pyarrow), not yet
    checked against the answers; None when the checking reader must judge it (``fast=False``
    or a pipe: always None)."""
    if fast is False or not regular(path):
        return None  # a pipe is read once, by the checking reader
    source = Path(path)
    if is_parquet(source):
        from snapaudit.tables.parquet import parquet_labels

        return parquet_labels(source)
    from snapaudit.tables.templatelabels import template_labels

    table = template_labels(source)  # the writers' layouts, parsed with numpy
    if table is not None:
        return table
    try:
        return label_table(source)
    except Declined:
        return None


def read_labels(path: str | Path, answers: Sequence[AnswerRow] | None = None, *,
                fast: bool | None = None,
                parsed: Callable[[], LabelTable | None] | None = None) -> LabelTable:
    """Read pair labels (JSONL or Parquet); with ``answers``, also check every label names a
    known answer. ``parsed`` gives :func:`parse_labels`' result when it was started elsewhere
    (e.g. beside the answers' read: :func:`snapaudit.tables.reading.read_tables`)."""
    table = parsed() if parsed is not None else parse_labels(path, fast)
    if table is not None and table.clean(answers):
        return table
    labels: list[PairLabel] = []
    seen: dict[tuple[str, str, AnswerRef, AnswerRef], int] = {}
    known = {(r.question_id, AnswerRef(r.state, r.repeat)) for r in answers} if answers else None
    refs: dict[tuple[str, int], AnswerRef] = {}
    for number, obj in records(source_of(path), path):
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
    """Write pair labels JSONL (the judge is always written), or Parquet when ``path`` ends in
    ``.parquet``."""
    write_table(path, "labels", labels, label_record)


def label_record(lab: PairLabel) -> dict[str, Any]:
    return {"question_id": lab.question_id, "a": {"state": lab.a.state, "repeat": lab.a.repeat},
            "b": {"state": lab.b.state, "repeat": lab.b.repeat}, "same": lab.same,
            "judge": lab.judge}
