"""Reading and writing gold tables: the interchange JSONL and the benchmark files."""

from __future__ import annotations

import ast
import csv
import io
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from snapaudit.errors import InputError
from snapaudit.tables.answers import (
    GOLD_FORMATS,
    _field,
    _str_list,
    _unknown_keys,
    is_parquet,
    records,
    write_table,
)
from snapaudit.tables.decoded import gold_table
from snapaudit.tables.jsonl import Declined, Source, lines, source_of
from snapaudit.tables.records import GoldRow


def read_gold(path: str | Path, fmt: str = "auto", *, fast: bool | None = None
              ) -> dict[str, tuple[str, ...]]:
    """Gold aliases by question id, from snapaudit gold (JSONL or Parquet), NQ-open JSONL or
    DPR TriviaQA TSV (``fast=False``: the checking reader only)."""
    if fmt not in GOLD_FORMATS:
        raise InputError(f"unknown gold format {fmt!r}; expected one of "
                         f"{', '.join(GOLD_FORMATS)}", path=str(path))
    source = source_of(path)
    if fmt == "auto":
        fmt = _sniff_gold(source, path)
    if fmt == "triviaqa-dpr":
        return _read_triviaqa_dpr(source, path)
    if fmt == "jsonl" and fast is not False:
        table = _gold_table(source)
        if table is not None:
            return table
    gold: dict[str, tuple[str, ...]] = {}
    line_of: dict[str, int] = {}
    for number, obj in records(source, path):
        where: dict[str, Any] = {"path": str(path), "line": number}
        if fmt == "nq-open":
            qid, answers = str(number - 1), _str_list(obj, "answer", where)
        else:
            _unknown_keys(obj, {"question_id", "answers"}, where)
            qid, answers = _field(obj, "question_id", str, where), _str_list(obj, "answers", where)
        _add_gold(gold, line_of, qid, answers, where)
    return gold


def _gold_table(source: Source) -> dict[str, tuple[str, ...]] | None:
    if is_parquet(source):
        from snapaudit.tables.parquet import parquet_gold

        return parquet_gold(source)
    if isinstance(source, Path):  # the writers' layouts, parsed with numpy
        from snapaudit.tables.templateanswers import template_gold

        table = template_gold(source)
        if table is not None:
            return table
    try:
        return gold_table(source)
    except Declined:
        return None


def _add_gold(gold: dict[str, tuple[str, ...]], line_of: dict[str, int], qid: str,
              answers: tuple[str, ...] | None, where: dict[str, Any]) -> None:
    if not answers:
        raise InputError(f"question {qid!r} has no gold answers", **where)
    if qid in gold:
        raise InputError(f"duplicate gold for question {qid!r} (first at line {line_of[qid]})",
                         **where)
    gold[qid] = answers
    line_of[qid] = where["line"]


def _sniff_gold(source: Source, path: str | Path) -> str:
    if Path(path).suffix.lower() in (".tsv", ".txt"):
        return "triviaqa-dpr"
    if is_parquet(source):
        return "jsonl"  # the snapaudit gold layout, in Parquet
    for _, obj in records(source, path):
        if "question_id" in obj:
            return "jsonl"
        if "answer" in obj and "question" in obj:
            return "nq-open"
        break
    raise InputError("cannot tell the gold format (expected snapaudit JSONL with "
                     "question_id/answers, NQ-open JSONL, or a DPR TriviaQA .tsv/.txt); "
                     "pass the format explicitly", path=str(path))


def _read_triviaqa_dpr(source: Source, path: str | Path) -> dict[str, tuple[str, ...]]:
    """DPR TriviaQA TSV: ``question \\t "['alias', ...]"``; id = 0-based row number."""
    gold: dict[str, tuple[str, ...]] = {}
    line_of: dict[str, int] = {}
    for row_no, (number, text) in enumerate(lines(source, path)):
        where: dict[str, Any] = {"path": str(path), "line": number}
        cells = next(csv.reader(io.StringIO(text), delimiter="\t"))
        if len(cells) != 2:
            raise InputError(f"expected 2 tab-separated columns, got {len(cells)}", **where)
        try:
            value = ast.literal_eval(cells[1])
        except (ValueError, SyntaxError):
            raise InputError("column 2 is not a Python list literal of aliases",
                             **where) from None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise InputError("column 2 must be a list of strings", **where)
        _add_gold(gold, line_of, str(row_no), tuple(value), where)
    return gold


def write_gold(path: str | Path,
               gold: Mapping[str, Sequence[str]] | Iterable[GoldRow]) -> None:
    """Write gold JSONL ``{"question_id", "answers"}`` (dict order or row order kept), or
    Parquet when ``path`` ends in ``.parquet``."""
    rows = ([GoldRow(q, tuple(a)) for q, a in gold.items()] if isinstance(gold, Mapping)
            else list(gold))
    write_table(path, "gold", rows,
                lambda row: {"question_id": row.question_id, "answers": list(row.answers)})
