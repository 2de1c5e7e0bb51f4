"""People in the loop: blind human labels (a judge ``human:NAME``) and the change review.

A :class:`ReviewSession` is one annotator on one locked run (answer and semantic locks).
It never takes the run directory's lock: several sessions, in several processes, may be
open on one run at once, each writing through SQLite transactions with a busy timeout.

* Blind labels (:meth:`ReviewSession.label_items`, :meth:`~ReviewSession.save_labels`): the
  judge audit's outcome-blind hash sample; per question the answers as anonymous items
  (:mod:`snapaudit.run.record.review_items`); the labels of a question are one cell of the
  ledger stage ``human:NAME``, written as a judge audit's are: an attempt row before the
  write, the cell accepted once (immutable); :meth:`~ReviewSession.finish_labels` locks them.
* Change review (:meth:`~ReviewSession.change_items`, :meth:`~ReviewSession.save_decision`):
  every question the comparison view lists; a decision is a row of the review table
  (:mod:`snapaudit.run.record.review_store`) with the hash of what was shown, refused when
  that hash is no longer the item's or the run's locks changed. The last decision per
  annotator and question stands; every earlier one is kept.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from snapaudit.errors import ConfigError, IntegrityError
from snapaudit.hashing import sha256_json
from snapaudit.names import NAME_RULE, is_name
from snapaudit.run.analysis.locked_run import ChangeRow, LockedRun, bound_hash
from snapaudit.run.record.review_items import (
    BlindAnswer,
    ChangeItem,
    Decision,
    DecisionRecord,
    LabelItem,
    Progress,
    check_decision,
    check_labels,
    label_request,
    labels_from_groups,
    labels_payload,
    saved_labels,
)
from snapaudit.run.record.review_store import (
    DecisionRow,
    LabelLock,
    ReviewStore,
    label_lock_content,
)
from snapaudit.run.record.rundir import RunDir
from snapaudit.stats.human import Label, human_judge

__all__ = ["BlindAnswer", "ChangeItem", "Decision", "DecisionRecord", "Label", "LabelItem",
           "Progress", "ReviewSession", "human_stage", "now_utc"]


def human_stage(annotator: str) -> str:
    """The ledger stage of an annotator's labels (also the judge's name): ``human:NAME``."""
    return human_judge(annotator)


def now_utc() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def check_annotator(annotator: str) -> str:
    if not is_name(annotator):
        raise ConfigError(f"annotator {annotator!r} {NAME_RULE}")
    return annotator


class ReviewSession:
    """One annotator's review of one locked run; thread-safe; :meth:`close` when done."""

    def __init__(self, rd: RunDir, run: LockedRun, store: ReviewStore, annotator: str,
                 sample: int | None):
        self._rd, self._run, self._store = rd, run, store
        self.annotator = annotator
        self.stage = human_stage(annotator)
        self._mutex = threading.RLock()
        self._sample = sample

    @classmethod
    def open(cls, run_dir: Path, annotator: str, *, sample: int | None = None
             ) -> ReviewSession:
        check_annotator(annotator)
        if sample is not None and sample < 1:
            raise ConfigError(f"the label sample needs at least 1 question, not {sample}")
        rd = RunDir(run_dir, read_only=True)  # no directory lock; writes go through SQLite
        if not rd.has_ledger():
            raise ConfigError(f"{run_dir}: no ledger.sqlite: not a snapaudit run directory")
        try:
            run = LockedRun.load(rd)
            store = ReviewStore(rd.ledger_path)
        except BaseException:
            rd.close()
            raise
        return cls(rd, run, store, annotator, sample)

    def __enter__(self) -> ReviewSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._mutex:
            self._store.close()
            self._rd.close()

    # ------------------------------------------------------------ blind labels

    def _cells(self) -> dict[str, dict[str, Any]]:
        return {c.cell_key: c.payload for c in self._rd.ledger().cells(self.stage)}

    def _sampled(self) -> list[str]:
        return self._run.sample(self._sample)

    def _item(self, qid: str, payload: Mapping[str, Any] | None) -> LabelItem:
        answers, pairs = self._run.blind(qid)
        saved = saved_labels(payload, self._run.items(qid)) if payload is not None else None
        return LabelItem(qid, self._run.questions.get(qid, ""), answers, pairs, saved)

    def label_items(self) -> list[LabelItem]:
        """The sample's questions as blind items, with this annotator's accepted labels."""
        with self._mutex:
            cells = self._cells()
            return [self._item(q, cells.get(q)) for q in self._sampled()]

    def label_item(self, question_id: str) -> LabelItem:
        """One question of the sample (a deep link); ConfigError when it is not in it."""
        with self._mutex:
            if question_id not in self._sampled():
                raise ConfigError(f"question {question_id!r} is not in the label sample")
            return self._item(question_id, self._cells().get(question_id))

    def save_groups(self, question_id: str, groups: Sequence[Sequence[str]]) -> LabelItem:
        """:meth:`save_labels` from a grouping of the items (same within a group, different
        across; every item in exactly one group)."""
        items = [a.item for a in self.label_item(question_id).answers]
        return self.save_labels(question_id, labels_from_groups(question_id, items, groups))

    def labels_locked(self) -> bool:
        return any(lock.annotator == self.annotator for lock in self._store.label_locks())

    def save_labels(self, question_id: str, labels: Mapping[str, Label]) -> LabelItem:
        """Accept the question's labels (every pair once); identical again is a no-op."""
        with self._mutex:
            if question_id not in self._sampled():
                raise ConfigError(f"question {question_id!r} is not in the label sample")
            if self.labels_locked():
                raise IntegrityError(f"the labels of {self.annotator} are locked (finished); "
                                     "no further label is accepted")
            items = self._run.items(question_id)
            checked = check_labels(question_id, list(items), labels)
            payload = labels_payload(question_id, items, checked)
            answers, _ = self._run.blind(question_id)
            request = label_request(question_id, self.annotator,
                                    self._run.questions.get(question_id, ""), answers)
            self._accept(question_id, payload, sha256_json(request))
            return self._item(question_id, self._cells().get(question_id))

    def _accept(self, qid: str, payload: dict[str, Any], request_hash: str) -> None:
        ledger = self._rd.ledger()
        if not self._same_as_accepted(qid, payload):
            try:
                aid = ledger.begin_attempt(self.stage, qid, request_hash)
            except IntegrityError:  # accepted meanwhile by another session
                self._same_as_accepted(qid, payload, must_exist=True)
                return
            try:
                ledger.finish_and_accept(self.stage, qid, aid, payload)
            except IntegrityError as exc:
                ledger.finish_attempt(aid, "error", error=str(exc))
                self._same_as_accepted(qid, payload, must_exist=True)

    def _same_as_accepted(self, qid: str, payload: dict[str, Any],
                          must_exist: bool = False) -> bool:
        """Whether the question's accepted cell holds these labels (IntegrityError when it
        holds others: accepted labels are immutable)."""
        stored = self._cells().get(qid)
        if stored is None:
            if must_exist:
                raise IntegrityError(f"{self.stage} cell {qid}: the write did not complete")
            return False
        if stored["labels"] != payload["labels"]:
            raise IntegrityError(f"question {qid}: labels of {self.annotator} were already "
                                 "accepted and cannot be changed")
        return True

    def finish_labels(self) -> None:
        """The annotator's lock over the stage ``human:NAME``; later saves are refused."""
        with self._mutex:
            cells = self._cells()
            if not cells:
                raise ConfigError(f"{self.annotator} has no accepted labels to finish")
            content = label_lock_content(self._rd.ledger().content_hashes(self.stage))
            self._store.add_label_lock(LabelLock(self.annotator, self.stage, self._run.bound,
                                                 content, len(cells), now_utc()))

    # ------------------------------------------------------------ change review

    def _standing(self) -> dict[str, DecisionRow]:
        """This annotator's standing decision per question (the last row, on this run)."""
        out: dict[str, DecisionRow] = {}
        for row in self._store.decisions():
            if row.annotator == self.annotator and row.bound_sha256 == self._run.bound:
                out[row.question_id] = row
        return out

    def _change(self, row: ChangeRow, standing: Mapping[str, DecisionRow]) -> ChangeItem:
        d = standing.get(row.question_id)
        record = (DecisionRecord(d.decision, d.note, d.annotator, d.at,  # type: ignore[arg-type]
                                 d.shown_sha256) if d is not None else None)
        return ChangeItem(row.question_id, row.question, row.old, row.new, row.gold,
                          self._run.old, self._run.new, row.shown_sha256, record)

    def change_items(self) -> list[ChangeItem]:
        """Every question the comparison view lists, with this annotator's decision."""
        with self._mutex:
            self._refresh()
            standing = self._standing()
            return [self._change(r, standing) for r in self._run.changes()]

    def change_item(self, question_id: str) -> ChangeItem:
        """One change item (a deep link); ConfigError when the question is not a change."""
        with self._mutex:
            self._refresh()
            row = {r.question_id: r for r in self._run.changes()}.get(question_id)
            if row is None:
                raise ConfigError(f"question {question_id!r} is not a change of this run")
            return self._change(row, self._standing())

    def _refresh(self) -> None:
        """Re-read the lock chain: a changed semantic lock is refused; a new lock (gold
        unlocked) is taken in (the items then show the gold)."""
        bound, length = bound_hash(self._rd.ledger())
        if bound != self._run.bound:
            raise IntegrityError("the run's locks changed since this review opened: reopen it")
        if length != self._run.chain_length:
            self._run.reload_gold()

    def save_decision(self, question_id: str, decision: Decision, note: str,
                      shown_sha256: str) -> ChangeItem:
        """Record a decision on a change item; ``shown_sha256`` must be the item's hash."""
        with self._mutex:
            checked = check_decision(decision, note)
            self._refresh()
            rows = {r.question_id: r for r in self._run.changes()}
            row = rows.get(question_id)
            if row is None:
                raise ConfigError(f"question {question_id!r} is not a change of this run")
            if shown_sha256 != row.shown_sha256:
                raise IntegrityError(f"question {question_id}: what was shown is not what the "
                                     "run shows now (the run changed): reload the item")
            self._store.add_decision(DecisionRow(
                self.annotator, question_id, checked, note, now_utc(), row.shown_sha256,
                row.gold is not None, self._run.bound))
            return self._change(row, self._standing())

    def progress(self) -> Progress:
        with self._mutex:
            sample = set(self._sampled()) if self._run.primary_labels else set()
            labelled = len(sample & set(self._cells()))
            changes = {r.question_id for r in self._run.changes()}
            reviewed = len(changes & set(self._standing()))
            return Progress(labelled, len(sample), self.labels_locked(), reviewed,
                            len(changes))
