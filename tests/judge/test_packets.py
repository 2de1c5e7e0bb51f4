"""Blind packets: seeded labels, completeness, and strict verdict validation."""

from __future__ import annotations

import hashlib
from dataclasses import fields
from itertools import combinations

import pytest

from snapaudit.errors import ConfigError, TransportInvalid
from snapaudit.judge.packets import (
    build_packet,
    parse_verdict,
    parse_verdict_text,
    to_pair_labels,
    verdict_payload,
)
from snapaudit.judge.prompt import prompt_spec, render_user
from snapaudit.tables import AnswerRef, PairLabel

STATES = ("secret_old_state", "secret_mid_state", "secret_mid2_state", "secret_new_state")


def answers8(texts: list[str] | None = None) -> list[tuple[AnswerRef, str]]:
    refs = [AnswerRef(s, r) for s in STATES for r in (1, 2)]
    texts = texts or [f"answer {i}" for i in range(8)]
    return list(zip(refs, texts, strict=True))


def test_eight_answers_give_28_pairs_in_label_order() -> None:
    packet, mapping = build_packet("q1", "Who?", answers8(), seed=7)
    assert packet.labels == tuple("ABCDEFGH")
    assert len(packet.pairs) == 28
    assert packet.pairs == tuple(combinations("ABCDEFGH", 2))
    assert sorted(mapping.values()) == sorted(ref for ref, _ in answers8())
    by_ref = dict(answers8())
    assert [by_ref[mapping[x]] for x in packet.labels] == list(packet.answers)


def test_permutation_matches_the_documented_construction() -> None:
    packet, mapping = build_packet("q-42", "Who?", answers8(), seed=2026)
    digest = hashlib.sha256(b"snapaudit/judge-labels/v1\x002026\x00q-42").digest()
    qseed = int.from_bytes(digest[:8], "big")
    canonical = sorted(ref for ref, _ in answers8())
    order = sorted(range(8), key=lambda i: hashlib.sha256(f"{qseed}\0{i}".encode()).digest())
    assert [mapping[x] for x in packet.labels] == [canonical[i] for i in order]


def test_labels_are_stable_for_a_seed_and_vary_across_seeds_and_questions() -> None:
    first = build_packet("q1", "Who?", answers8(), seed=1)
    assert build_packet("q1", "Who?", answers8(), seed=1) == first
    assert build_packet("q1", "Who?", list(reversed(answers8())), seed=1) == first
    perms = {tuple(build_packet("q1", "Who?", answers8(), seed=s)[1].values())
             for s in range(10)}
    assert len(perms) > 5
    other_q = {tuple(build_packet(f"q{i}", "Who?", answers8(), seed=1)[1].values())
               for i in range(10)}
    assert len(other_q) > 5


def test_packet_and_prompt_are_blind() -> None:
    packet, _ = build_packet("q1", "What is the capital?", answers8(), seed=3)
    text = render_user(packet)
    for state in STATES:
        assert "secret" not in text and state not in text
    assert "repeat" not in text.lower()
    assert "q1" not in text
    assert {f.name for f in fields(packet)} == {
        "question_id", "question", "labels", "answers", "pairs"}
    for label, answer in zip(packet.labels, packet.answers, strict=True):
        assert f"{label}: {answer}" in text


def test_identical_answers_are_still_sent() -> None:
    packet, _ = build_packet("q1", "Who?", answers8(["Paris"] * 8), seed=3)
    assert packet.answers == ("Paris",) * 8
    assert len(packet.pairs) == 28


def test_endpoint_scope_has_six_pairs_and_bad_inputs_are_refused() -> None:
    packet, _ = build_packet("q1", "Who?", answers8()[:2] + answers8()[-2:], seed=3)
    assert len(packet.pairs) == 6
    with pytest.raises(ConfigError):
        build_packet("q1", "Who?", answers8()[:1], seed=3)
    with pytest.raises(ConfigError):
        build_packet("q1", "Who?", [answers8()[0], answers8()[0]], seed=3)


def test_valid_verdict_in_either_orientation() -> None:
    packet, _ = build_packet("q1", "Who?", answers8()[:3], seed=5)
    obj = {"pairs": [{"a": "B", "b": "A", "same": True}, {"a": "A", "b": "C", "same": False},
                     {"a": "C", "b": "B", "same": False}]}
    verdict = parse_verdict(packet, obj)
    assert verdict == {("A", "B"): True, ("A", "C"): False, ("B", "C"): False}
    assert list(verdict) == list(packet.pairs)
    assert parse_verdict_text(packet, "```json\n" + str(obj).replace("'", '"')
                              .replace("True", "true").replace("False", "false") + "\n```")
    assert verdict_payload(verdict)["pairs"][0] == {"a": "A", "b": "B", "same": True}


GOOD = [{"a": "A", "b": "B", "same": True}, {"a": "A", "b": "C", "same": False},
        {"a": "B", "b": "C", "same": False}]
BAD = {
    "missing pair": {"pairs": GOOD[:2]},
    "duplicate pair": {"pairs": [*GOOD, {"a": "B", "b": "A", "same": True}]},
    "non-boolean": {"pairs": [GOOD[0], GOOD[1], {"a": "B", "b": "C", "same": 0}]},
    "string boolean": {"pairs": [GOOD[0], GOOD[1], {"a": "B", "b": "C", "same": "false"}]},
    "extra pair": {"pairs": [*GOOD, {"a": "A", "b": "D", "same": True}]},
    "self pair": {"pairs": [*GOOD, {"a": "A", "b": "A", "same": True}]},
    "extra item key": {"pairs": [GOOD[0], GOOD[1], {**GOOD[2], "why": "x"}]},
    "extra top key": {"pairs": GOOD, "notes": ""},
    "not a list": {"pairs": {"A-B": True}},
    "not an object": [GOOD],
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_malformed_verdicts_are_transport_invalid(case: str) -> None:
    packet, _ = build_packet("q1", "Who?", answers8()[:3], seed=5)
    with pytest.raises(TransportInvalid) as info:
        parse_verdict(packet, BAD[case])
    assert info.value.reason == "schema"


@pytest.mark.parametrize("text", ['{"pairs": [', '{"pairs": ' + "9" * 5000 + "}",
                                  "[" * 100_000 + "]" * 100_000])
def test_invalid_json_text_is_transport_invalid(text: str) -> None:
    packet, _ = build_packet("q1", "Who?", answers8()[:3], seed=5)
    with pytest.raises(TransportInvalid) as info:
        parse_verdict_text(packet, text)
    assert info.value.reason == "schema"


def test_pair_labels_are_deanonymized_and_ordered() -> None:
    packet, mapping = build_packet("q1", "Who?", answers8()[:3], seed=5)
    verdict = {pair: pair == ("A", "B") for pair in packet.pairs}
    labels = to_pair_labels("q1", verdict, mapping, judge="j")
    assert len(labels) == 3
    assert all(lab.a < lab.b for lab in labels)
    same = [lab for lab in labels if lab.same]
    assert same == [PairLabel("q1", *sorted((mapping["A"], mapping["B"])), True, "j")]


def test_prompt_hash_is_fixed() -> None:
    spec = prompt_spec()
    assert spec["version"] == "snapaudit/judge-prompt/v1"
    assert len(spec["sha256"]) == 64 and spec == prompt_spec()


def test_identical_consistency_counts_normalized_equal_pairs() -> None:
    from snapaudit.stats.consistency import identical_consistency
    from snapaudit.stats.normalize import normalize_nq
    from snapaudit.tables import AnswerRow

    rows = [AnswerRow("q", "s", 1, "The Paris"), AnswerRow("q", "s", 2, "paris."),
            AnswerRow("q", "t", 1, "Paris"), AnswerRow("q", "t", 2, "Lyon")]
    s1, s2, t1, t2 = (AnswerRef(r.state, r.repeat) for r in rows)
    labels = [PairLabel("q", s1, s2, True, "j"), PairLabel("q", s1, t1, False, "j"),
              PairLabel("q", s2, t1, True, "j"), PairLabel("q", t1, t2, False, "j"),
              PairLabel("q", s1, s2, False, "other")]
    result = identical_consistency(rows, labels, "j", normalize_nq)
    assert (result.identical_pairs, result.labelled_same) == (3, 2)
    assert result.share_same == 2 / 3
