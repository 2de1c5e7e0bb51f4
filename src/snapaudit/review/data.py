"""The review app's one door to the review library (:mod:`snapaudit.run.after.review`).

:class:`ReviewData` owns one ``ReviewSession`` and runs every call to it on one worker
thread (the session and its ledger connection stay on the thread that opened them, whatever
thread serves the request). It turns the library's records into the JSON the page reads:
every string that came from a system, a corpus or a file goes through
:func:`snapaudit.report.untrusted.shown` (bidi and control characters written visibly, as
the report does); the page then inserts it as text, never as HTML. Long change items carry
a word diff of the most frequent old and new answers. With a
:class:`~snapaudit.review.refresh.ResultsUpdater`, a label lock and a decision bring the run's
``results.json`` and report up to date (on the updater's thread; the progress says how far).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

from snapaudit.report.untrusted import shown
from snapaudit.review.diff import is_long, word_diff
from snapaudit.review.refresh import ResultsUpdater

Mode = Literal["label", "change"]
T = TypeVar("T")
LABELS = ("same", "different", "unsure")
DECISIONS = ("regression", "improvement", "neutral", "unclear")


class Session(Protocol):
    """What the app calls on a ``snapaudit.run.after.review.ReviewSession``."""

    def label_items(self) -> Sequence[Any]: ...
    def save_labels(self, question_id: str, labels: Mapping[str, Any]) -> Any: ...
    def save_groups(self, question_id: str, groups: Sequence[Sequence[str]]) -> Any: ...
    def finish_labels(self) -> None: ...
    def change_items(self) -> Sequence[Any]: ...
    def save_decision(self, question_id: str, decision: Any, note: str,
                      shown_sha256: str) -> Any: ...
    def progress(self) -> Any: ...
    def close(self) -> None: ...


def open_library_session(run_dir: Path, annotator: str, sample: int | None) -> Session:
    from snapaudit.run.after.review import ReviewSession

    session: Session = ReviewSession.open(run_dir, annotator, sample=sample)
    return session


class ReviewData:
    """The JSON views of one annotator's session, in one mode."""

    def __init__(self, opener: Callable[[], Session], *, mode: Mode, annotator: str,
                 updater: Callable[[], ResultsUpdater] | None = None) -> None:
        self.mode: Mode = mode
        self.annotator = annotator
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="snapaudit-review")
        try:
            self._session = self._pool.submit(opener).result()
        except BaseException:
            self._pool.shutdown(wait=False)
            raise
        self.updater = updater() if updater is not None else None  # once the session opened

    def _call(self, fn: Callable[[], T]) -> T:
        return self._pool.submit(fn).result()

    def items(self) -> dict[str, Any]:
        if self.mode == "label":
            rows = [label_json(i) for i in self._call(self._session.label_items)]
        else:
            rows = [change_json(i) for i in self._call(self._session.change_items)]
        return {"mode": self.mode, "annotator": self.annotator, "items": rows,
                "progress": self.progress()}

    def progress(self) -> dict[str, Any]:
        p = self._call(self._session.progress)
        out = {"labelled": p.labelled, "label_total": p.label_total,
               "labels_locked": p.labels_locked, "reviewed": p.reviewed, "changed": p.changed}
        if self.updater is not None:
            out["results"] = self.updater.state()
        return out

    def _changed(self) -> None:
        """The ledger now holds what the results should show: update them (soon)."""
        if self.updater is not None:
            self.updater.request()

    def save_labels(self, question_id: str, labels: Mapping[str, str]) -> dict[str, Any]:
        item = self._call(lambda: self._session.save_labels(question_id, dict(labels)))
        return {"item": label_json(item), "progress": self.progress()}

    def save_groups(self, question_id: str, groups: Sequence[Sequence[str]]) -> dict[str, Any]:
        """The question's labels from a grouping of its items (the library's rule: same
        within a group, different across)."""
        item = self._call(lambda: self._session.save_groups(question_id, groups))
        return {"item": label_json(item), "progress": self.progress()}

    def finish_labels(self) -> dict[str, Any]:
        self._call(self._session.finish_labels)
        self._changed()  # locked labels are a human judge of results.json
        return {"progress": self.progress()}

    def save_decision(self, question_id: str, decision: str, note: str,
                      shown_sha256: str) -> dict[str, Any]:
        item = self._call(lambda: self._session.save_decision(question_id, decision, note,
                                                              shown_sha256))
        self._changed()
        return {"item": change_json(item), "progress": self.progress()}

    def close(self) -> None:
        """Close the session, then let the updater finish what was asked of it."""
        try:
            self._call(self._session.close)
        finally:
            self._pool.shutdown(wait=True)
            if self.updater is not None:
                self.updater.close()


def label_json(item: Any) -> dict[str, Any]:
    """A label item: the question and the anonymous answers, nothing else of the run."""
    saved = item.saved
    return {"question_id": shown(item.question_id), "question": shown(item.question),
            "answers": [{"item": shown(a.item), "text": shown(a.text)} for a in item.answers],
            "pairs": [shown(p) for p in item.pairs],
            "saved": None if saved is None else {str(k): str(v) for k, v in saved.items()}}


def change_json(item: Any) -> dict[str, Any]:
    old, new = [shown(a) for a in item.old], [shown(a) for a in item.new]
    first_old, first_new = _most_common(old), _most_common(new)
    diff = (word_diff(first_old, first_new)
            if is_long(first_old, first_new) and first_old != first_new else None)
    decision = item.decision
    return {"question_id": shown(item.question_id), "question": shown(item.question),
            "old": _stacked(old), "new": _stacked(new),
            "gold": None if item.gold is None else [shown(g) for g in item.gold],
            "old_state": shown(item.old_state), "new_state": shown(item.new_state),
            "shown_sha256": item.shown_sha256,
            "diff": None if diff is None else [list(d) for d in diff],
            "decision": None if decision is None else {
                "decision": decision.decision, "note": shown(decision.note),
                "annotator": shown(decision.annotator), "at": shown(decision.at)}}


def _most_common(answers: Sequence[str]) -> str:
    return Counter(answers).most_common(1)[0][0] if answers else ""


def _stacked(answers: Sequence[str]) -> list[dict[str, Any]]:
    """The repeats stacked as the report stacks them: identical answers once, with a count,
    in order of first appearance."""
    counts = Counter(answers)
    seen: dict[str, None] = dict.fromkeys(answers)
    return [{"text": a, "count": counts[a]} for a in seen]
