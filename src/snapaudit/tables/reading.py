"""Reading an audit's tables together: the labels file is parsed while the answers are read.

At 10^5 questions x 5 repeats the labels table and the answers table each take seconds to
read. pyarrow's Parquet reader and numpy release the GIL, so two Parquet tables are read side
by side; msgspec's JSONL decode holds it, so two JSONL tables share the interpreter. The gold
file is read in a second worker meanwhile. What the caller sees is what reading them one
after another gives: the same tables, and the same first error (the answers' before
the labels', the labels' before the gold's), because a parse started early only returns a
table (or None), the checks against the answers run after the answers are read, and the
gold's result (or its error) is taken last.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from snapaudit.tables.answers import read_answers
from snapaudit.tables.gold import read_gold
from snapaudit.tables.labels import parse_labels, read_labels
from snapaudit.tables.labeltable import LabelTable
from snapaudit.tables.records import AnswerRow, PairLabel

Tables = tuple[Sequence[AnswerRow], LabelTable | list[PairLabel], dict[str, tuple[str, ...]] | None]


def read_tables(answers: str | Path, labels: str | Path | None = None,
                gold: str | Path | None = None, gold_format: str = "auto") -> Tables:
    """(answer rows, labels (``[]`` without a file), gold (None without a file)), as
    :func:`read_answers`, :func:`read_labels` (checked against the answers) and
    :func:`read_gold` give them."""
    if labels is None:
        rows = read_answers(answers)
        return rows, [], read_gold(gold, gold_format) if gold is not None else None
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="snapaudit-tables") as pool:
        parsing = pool.submit(parse_labels, labels)
        # the gold's read (or its error) is taken only after the labels are checked
        golden = pool.submit(read_gold, gold, gold_format) if gold is not None else None
        rows = read_answers(answers)  # an error here waits for the others, then propagates
        table = read_labels(labels, rows, parsed=parsing.result)
        return rows, table, golden.result() if golden is not None else None
