"""What a review shows and stores: blind label items, change items, their hashes and payloads.

Blind items: the answers of one question that the primary judge labelled, shown as ``A``,
``B``, ... in an order drawn from ``SHA-256("snapaudit/human-labels/v1" NUL seed NUL qid)``
(the design seed), so every session of every annotator sees the same items; never the state,
the evidence, gold or a judge's labels. The pairs are every unordered pair of items, in item
order (``A|B``, ``A|C``, ... ``B|C``, ...).

A change item shows the question, the old and new state's answers by repeat and, once the
gold is unlocked, the gold answers; ``shown_sha256`` is the SHA-256 of exactly that
(:func:`shown_digest`: the texts of the answers, the question and gold by their SHA-256),
recomputed by ``snapaudit verify`` from the artifact's locked answers.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

from snapaudit.errors import ConfigError
from snapaudit.hashing import sha256_json, sha256_text
from snapaudit.stats.human import LABELS, HumanLabel, Label
from snapaudit.tables import AnswerRef

Decision = Literal["regression", "improvement", "neutral", "unclear"]
DECISIONS: tuple[Decision, ...] = ("regression", "improvement", "neutral", "unclear")
ORDER_VERSION = "snapaudit/human-labels/v1"
SHOWN_VERSION = "snapaudit/review-shown/v1"
MAX_NOTE_CHARS = 4000


@dataclass(frozen=True, slots=True)
class BlindAnswer:
    item: str
    text: str


@dataclass(frozen=True, slots=True)
class LabelItem:
    question_id: str
    question: str
    answers: tuple[BlindAnswer, ...]
    pairs: tuple[str, ...]
    saved: Mapping[str, Label] | None


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    decision: Decision
    note: str
    annotator: str
    at: str
    shown_sha256: str


@dataclass(frozen=True, slots=True)
class ChangeItem:
    question_id: str
    question: str
    old: tuple[str, ...]
    new: tuple[str, ...]
    gold: tuple[str, ...] | None
    old_state: str
    new_state: str
    shown_sha256: str
    decision: DecisionRecord | None


@dataclass(frozen=True, slots=True)
class Progress:
    labelled: int
    label_total: int
    labels_locked: bool
    reviewed: int
    changed: int


def item_name(index: int) -> str:
    """``A`` .. ``Z``, then ``AA``, ``AB``, ..."""
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(ord("A") + rest) + name
    return name


def blind_order(question_id: str, refs: Sequence[AnswerRef], seed: int) -> dict[str, AnswerRef]:
    """Item name -> answer: ``refs`` (sorted first) permuted by the question's seeded draw."""
    digest = hashlib.sha256(f"{ORDER_VERSION}\0{seed}\0{question_id}".encode()).hexdigest()
    order = sorted(set(refs))
    random.Random(int(digest[:16], 16)).shuffle(order)
    return {item_name(i): ref for i, ref in enumerate(order)}


def item_pairs(items: Sequence[str]) -> tuple[str, ...]:
    return tuple(f"{x}|{y}" for x, y in combinations(items, 2))


def check_labels(question_id: str, items: Sequence[str], labels: Mapping[str, str]
                 ) -> dict[str, Label]:
    """``labels`` keyed by canonical pair (``X|Y`` in item order): every pair exactly once
    with a known label, else a ConfigError naming the pair."""
    rank = {x: i for i, x in enumerate(items)}
    out: dict[str, Label] = {}
    for key, value in labels.items():
        x, sep, y = str(key).partition("|")
        if not sep or x not in rank or y not in rank or x == y:
            raise ConfigError(f"question {question_id}: unknown pair {key!r} (the pairs are "
                              f"{', '.join(item_pairs(items)[:3])}, ...)")
        pair = f"{x}|{y}" if rank[x] < rank[y] else f"{y}|{x}"
        if pair in out:
            raise ConfigError(f"question {question_id}: pair {pair} is labelled twice")
        if value not in LABELS:
            raise ConfigError(f"question {question_id}: pair {pair}: label {value!r} is not "
                              "one of same, different, unsure")
        out[pair] = value  # type: ignore[assignment]  # checked against LABELS
    missing = [p for p in item_pairs(items) if p not in out]
    if missing:
        raise ConfigError(f"question {question_id}: {len(missing)} pair(s) not labelled: "
                          + ", ".join(missing[:5]))
    return {p: out[p] for p in item_pairs(items)}


def labels_from_groups(question_id: str, items: Sequence[str],
                       groups: Sequence[Sequence[str]]) -> dict[str, Label]:
    """The pair labels of a grouping of the items (answers dragged into groups): ``same``
    within a group, ``different`` across; every item in exactly one group (ConfigError)."""
    where: dict[str, int] = {}
    for g, group in enumerate(groups):
        for item in group:
            if item not in items:
                raise ConfigError(f"question {question_id}: unknown item {item!r}")
            if item in where:
                raise ConfigError(f"question {question_id}: item {item} is in two groups")
            where[item] = g
    missing = [x for x in items if x not in where]
    if missing:
        raise ConfigError(f"question {question_id}: item(s) {', '.join(missing)} in no group")
    return {p: ("same" if where[p[:p.index("|")]] == where[p[p.index("|") + 1:]]
                else "different") for p in item_pairs(items)}


def labels_payload(question_id: str, items: Mapping[str, AnswerRef],
                   labels: Mapping[str, Label]) -> dict[str, Any]:
    """The accepted payload of one question's human labels (pairs in item order)."""
    rows = []
    for pair, label in labels.items():
        x, _, y = pair.partition("|")
        a, b = sorted((items[x], items[y]))
        rows.append({"pair": pair, "a": [a.state, a.repeat], "b": [b.state, b.repeat],
                     "label": label})
    return {"question_id": question_id,
            "items": {k: [r.state, r.repeat] for k, r in items.items()}, "labels": rows}


def decode_human(payload: Mapping[str, Any], judge: str) -> list[HumanLabel]:
    """The human labels of one accepted cell."""
    qid = str(payload["question_id"])
    return [HumanLabel(qid, AnswerRef(*row["a"]), AnswerRef(*row["b"]), row["label"], judge)
            for row in payload.get("labels", [])]


def saved_labels(payload: Mapping[str, Any], items: Mapping[str, AnswerRef]
                 ) -> dict[str, Label]:
    """A stored payload's labels keyed by the current item pairs."""
    name = {ref: k for k, ref in items.items()}
    rank = {k: i for i, k in enumerate(items)}
    out: dict[str, Label] = {}
    for row in payload.get("labels", []):
        x, y = name[AnswerRef(*row["a"])], name[AnswerRef(*row["b"])]
        out[f"{x}|{y}" if rank[x] < rank[y] else f"{y}|{x}"] = row["label"]
    return {p: out[p] for p in item_pairs(list(items)) if p in out}


def label_request(question_id: str, annotator: str, question: str,
                  answers: Sequence[BlindAnswer]) -> dict[str, Any]:
    """The request an attempt's hash binds: who labels which blind items."""
    return {"question_id": question_id, "annotator": annotator, "version": ORDER_VERSION,
            "shown": sha256_json([question, [[a.item, a.text] for a in answers]])}


def shown_digest(question_id: str, question_sha256: str, old_state: str, new_state: str,
                 old: Sequence[str], new: Sequence[str], gold_sha256: str | None) -> str:
    """The hash of what a change item shows, from the question's and gold's hashes as the
    artifact keeps them (``cohort.json``'s ``sha256_text(question)``, ``gold.sha256.json``'s
    ``sha256_json(aliases)``), so ``snapaudit verify`` recomputes it with no text."""
    return sha256_json({"version": SHOWN_VERSION, "question_id": question_id,
                        "question_sha256": question_sha256, "old_state": old_state,
                        "new_state": new_state, "old": list(old), "new": list(new),
                        "gold_sha256": gold_sha256})


def shown_sha256(question_id: str, question: str, old_state: str, new_state: str,
                 old: Sequence[str], new: Sequence[str], gold: Sequence[str] | None) -> str:
    """The hash of exactly what a change item shows (:func:`shown_digest`)."""
    return shown_digest(question_id, sha256_text(question), old_state, new_state, old, new,
                        None if gold is None else sha256_json(list(gold)))


def check_decision(decision: str, note: str) -> Decision:
    if decision not in DECISIONS:
        raise ConfigError(f"decision {decision!r} is not one of {', '.join(DECISIONS)}")
    if not isinstance(note, str) or len(note) > MAX_NOTE_CHARS:
        raise ConfigError(f"a note is text of at most {MAX_NOTE_CHARS} characters")
    return decision  # type: ignore[return-value]  # checked against DECISIONS
