"""Blind judge packets: seeded anonymous labels, the verdict schema and its validation.

A packet holds one question and all of its answers in the packet scope, each
under an anonymous label. Nothing else reaches the judge: no state, no repeat,
no document id, no evidence, no gold, no correctness. Identical answers are
still sent (never short-circuited), so the judge's consistency on them can be
checked.

Label permutation (version ``LABELS_VERSION``):

1. the answers are put in canonical order, sorted by ``AnswerRef`` (state, then
   repeat), so the packet does not depend on the order the caller passed;
2. the per-question seed is the first 8 bytes (big-endian) of
   ``SHA-256("snapaudit/judge-labels/v1" NUL str(seed) NUL question_id)``;
3. each canonical position ``i`` gets the sort key
   ``SHA-256(str(question_seed) NUL str(i))``; sorting positions by that key is the
   permutation; position ``k`` of the sorted order gets label ``LABELS[k]``.

Presentation order is label order ("A", "B", ...). Pairs are every unordered
label pair ``(x, y)`` with ``x < y`` in presentation order (28 for 8 answers).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from snapaudit.errors import ConfigError, TransportInvalid
from snapaudit.judge.base import JudgePacket
from snapaudit.reasons import FailureReason
from snapaudit.tables import AnswerRef, PairLabel

LABELS_VERSION = "snapaudit/judge-labels/v1"
LABELS = tuple(chr(ord("A") + i) for i in range(26))
Verdict = dict[tuple[str, str], bool]


def question_seed(seed: int, question_id: str) -> int:
    """The per-question seed: SHA-256 of the protocol seed and the question id."""
    digest = hashlib.sha256(f"{LABELS_VERSION}\0{seed}\0{question_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def label_permutation(n: int, qseed: int) -> list[int]:
    """Canonical positions in presentation order: ``result[k]`` is labelled ``LABELS[k]``."""
    def key(i: int) -> bytes:
        return hashlib.sha256(f"{qseed}\0{i}".encode()).digest()

    return sorted(range(n), key=key)


def build_packet(
    question_id: str,
    question: str,
    answers: Sequence[tuple[AnswerRef, str]],
    seed: int,
) -> tuple[JudgePacket, dict[str, AnswerRef]]:
    """The blind packet of one question and the label -> answer map the engine keeps."""
    refs = [ref for ref, _ in answers]
    if len(set(refs)) != len(refs):
        raise ConfigError(f"question {question_id}: the same answer ref appears twice")
    if not 2 <= len(answers) <= len(LABELS):
        raise ConfigError(
            f"question {question_id}: a packet needs 2 to {len(LABELS)} answers, "
            f"got {len(answers)}"
        )
    canonical = sorted(answers, key=lambda item: item[0])
    order = label_permutation(len(canonical), question_seed(seed, question_id))
    labels = LABELS[: len(canonical)]
    mapping = {labels[k]: canonical[i][0] for k, i in enumerate(order)}
    texts = tuple(canonical[i][1] for i in order)
    packet = JudgePacket(
        question_id=question_id,
        question=question,
        labels=labels,
        answers=texts,
        pairs=tuple(combinations(labels, 2)),
    )
    return packet, mapping


def verdict_schema(packet: JudgePacket) -> dict[str, Any]:
    """The fixed JSON output schema: ``{"pairs": [{"a": "A", "b": "B", "same": true}, ...]}``."""
    label = {"type": "string", "enum": list(packet.labels)}
    n = len(packet.pairs)
    return {
        "type": "object",
        "properties": {
            "pairs": {
                "type": "array",
                "minItems": n,
                "maxItems": n,
                "items": {
                    "type": "object",
                    "properties": {"a": label, "b": label, "same": {"type": "boolean"}},
                    "required": ["a", "b", "same"],
                    "additionalProperties": False,
                },
            }
        },
        "required": ["pairs"],
        "additionalProperties": False,
    }


def _invalid(detail: str) -> TransportInvalid:
    return TransportInvalid(FailureReason.SCHEMA, detail=detail)


def _pair_key(packet: JudgePacket, item: Any) -> tuple[tuple[str, str], bool]:
    if not isinstance(item, dict) or set(item) != {"a", "b", "same"}:
        raise _invalid(f"a pair must be an object with keys a, b, same: {item!r}"[:200])
    a, b, same = item["a"], item["b"], item["same"]
    if not isinstance(a, str) or not isinstance(b, str):
        raise _invalid(f"pair labels must be strings: {a!r}, {b!r}")
    if not isinstance(same, bool):
        raise _invalid(f"'same' must be a boolean, got {same!r}")
    if a == b or a not in packet.labels or b not in packet.labels:
        raise _invalid(f"not a pair of this packet: {a!r}, {b!r}")
    first, second = (a, b) if packet.labels.index(a) < packet.labels.index(b) else (b, a)
    return (first, second), same


def parse_verdict(packet: JudgePacket, obj: Any) -> Verdict:
    """Validate a parsed verdict: exactly the packet's pairs, each once, booleans only.

    A pair may name its labels in either order. Anything else raises
    ``TransportInvalid("schema")``, which the engine retries.
    """
    if not isinstance(obj, dict) or set(obj) != {"pairs"}:
        raise _invalid("the verdict must be an object with the single key 'pairs'")
    items = obj["pairs"]
    if not isinstance(items, list):
        raise _invalid("'pairs' must be a list")
    verdict: Verdict = {}
    for item in items:
        key, same = _pair_key(packet, item)
        if key in verdict:
            raise _invalid(f"pair {key[0]}-{key[1]} given twice")
        verdict[key] = same
    missing = [p for p in packet.pairs if p not in verdict]
    if missing:
        shown = ", ".join(f"{a}-{b}" for a, b in missing[:5])
        raise _invalid(f"{len(missing)} pair(s) missing: {shown}")
    return {pair: verdict[pair] for pair in packet.pairs}


def parse_verdict_text(packet: JudgePacket, text: str) -> Verdict:
    """Parse a judge's raw text (JSON, optionally inside one Markdown code fence)."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    try:
        obj = json.loads(body)
    except (ValueError, RecursionError) as exc:  # syntax, digit limit, nesting
        raise _invalid(f"invalid JSON: {str(exc)[:120]}") from None
    return parse_verdict(packet, obj)


def verdict_payload(verdict: Mapping[tuple[str, str], bool]) -> dict[str, Any]:
    """A verdict in the fixed output schema, pairs in packet order (for the ledger)."""
    return {"pairs": [{"a": a, "b": b, "same": same} for (a, b), same in verdict.items()]}


def to_pair_labels(
    question_id: str,
    verdict: Mapping[tuple[str, str], bool],
    mapping: Mapping[str, AnswerRef],
    judge: str,
) -> list[PairLabel]:
    """De-anonymize a verdict into pair labels (``a`` < ``b`` by state, then repeat)."""
    labels: list[PairLabel] = []
    for (x, y), same in verdict.items():
        a, b = sorted((mapping[x], mapping[y]))
        labels.append(PairLabel(question_id=question_id, a=a, b=b, same=same, judge=judge))
    return sorted(labels, key=lambda lab: (lab.a, lab.b))

