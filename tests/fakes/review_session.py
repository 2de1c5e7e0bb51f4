"""An in-memory review session with the library's interface and item types, for the app's
HTTP tests.

It keeps the contract's rules that the server maps to statuses: an unknown question or a
missing pair is a ConfigError (400); different labels for a saved question or a stale
``shown_sha256`` is an IntegrityError (409); a save after ``finish_labels`` is a LockError."""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Mapping, Sequence
from dataclasses import replace
from itertools import combinations
from typing import Any

from snapaudit.errors import ConfigError, IntegrityError, LockError
from snapaudit.run.record.review_items import BlindAnswer as Blind
from snapaudit.run.record.review_items import ChangeItem as Change
from snapaudit.run.record.review_items import DecisionRecord as Record
from snapaudit.run.record.review_items import LabelItem as Label
from snapaudit.run.record.review_items import Progress as Counts


def _sha(*parts: str) -> str:
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()


class FakeSession:
    def __init__(self, questions: Mapping[str, tuple[str, Sequence[str], Sequence[str]]],
                 annotator: str = "ann") -> None:
        """``questions``: id -> (question, old answers, new answers)."""
        self.annotator = annotator
        self.closed = False
        self.broken: Exception | None = None  # raised by progress() when set
        self._lock = threading.Lock()
        self.locked = False
        self.labels: dict[str, Label] = {}
        self.changes: dict[str, Change] = {}
        for qid, (question, old, new) in questions.items():
            answers = tuple(Blind(chr(65 + i), t) for i, t in enumerate([*old, *new]))
            pairs = tuple(f"{a.item}|{b.item}" for a, b in combinations(answers, 2))
            self.labels[qid] = Label(qid, question, answers, pairs, None)
            self.changes[qid] = Change(qid, question, tuple(old), tuple(new), None, "n1", "n7",
                                       _sha(question, *old, *new), None)

    def label_items(self) -> list[Label]:
        return list(self.labels.values())

    def save_labels(self, question_id: str, labels: Mapping[str, Any]) -> Label:
        with self._lock:
            if self.locked:
                raise LockError(f"the labels of {self.annotator} are locked")
            item = self.labels.get(question_id)
            if item is None:
                raise ConfigError(f"question {question_id!r} is not in the label sample")
            for pair in item.pairs:
                if pair not in labels:
                    raise ConfigError(f"{question_id}: pair {pair} has no label")
            if item.saved is not None:
                if dict(item.saved) != dict(labels):
                    raise IntegrityError(f"{question_id}: labels already accepted")
                return item
            self.labels[question_id] = saved = replace(item, saved=dict(labels))
            return saved

    def save_groups(self, question_id: str, groups: Sequence[Sequence[str]]) -> Label:
        item = self.labels.get(question_id)
        if item is None:
            raise ConfigError(f"question {question_id!r} is not in the label sample")
        where = {i: n for n, group in enumerate(groups) for i in group}
        labels = {p: "same" if where.get(p[0]) == where.get(p[2]) else "different"
                  for p in item.pairs}
        return self.save_labels(question_id, labels)

    def finish_labels(self) -> None:
        self.locked = True

    def change_items(self) -> list[Change]:
        return list(self.changes.values())

    def save_decision(self, question_id: str, decision: Any, note: str,
                      shown_sha256: str) -> Change:
        with self._lock:
            item = self.changes.get(question_id)
            if item is None:
                raise ConfigError(f"question {question_id!r} is not a changed question")
            if shown_sha256 != item.shown_sha256:
                raise IntegrityError(f"{question_id}: what was shown has changed")
            record = Record(decision, note, self.annotator, "2026-01-01T00:00:00Z",
                            shown_sha256)
            self.changes[question_id] = saved = replace(item, decision=record)
            return saved

    def progress(self) -> Counts:
        if self.broken is not None:
            raise self.broken
        return Counts(sum(i.saved is not None for i in self.labels.values()), len(self.labels),
                      self.locked, sum(c.decision is not None for c in self.changes.values()),
                      len(self.changes))

    def close(self) -> None:
        self.closed = True
