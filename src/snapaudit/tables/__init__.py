"""Answer tables: the interchange format every analysis reads.

Owned by the analysis core. The record types below are the contract the
engine, the judge and the artifact code build on; the readers and validators
for the JSONL formats live in this module too.
"""
from __future__ import annotations

from snapaudit.tables.answers import GOLD_FORMATS, read_answers, validate_answers, write_answers
from snapaudit.tables.answertable import AnswerTable
from snapaudit.tables.gold import read_gold, write_gold
from snapaudit.tables.labels import read_labels, validate_labels, write_labels
from snapaudit.tables.labeltable import LabelTable
from snapaudit.tables.reading import read_tables
from snapaudit.tables.records import AnswerRef, AnswerRow, GoldRow, PairLabel, Step

__all__ = ["GOLD_FORMATS", "AnswerRef", "AnswerRow", "AnswerTable", "GoldRow", "LabelTable",
           "PairLabel", "Step", "read_answers", "read_gold", "read_labels", "read_tables",
           "validate_answers", "validate_labels", "write_answers", "write_gold", "write_labels"]
