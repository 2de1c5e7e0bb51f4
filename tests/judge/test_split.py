"""Packet splitting under a token budget; the long-form judge prompt."""

from __future__ import annotations

from itertools import combinations

import pytest

from snapaudit.errors import ConfigError
from snapaudit.judge import prompt, prompt_long
from snapaudit.judge.split import estimate_tokens, split_packets
from snapaudit.tables import AnswerRef

REFS = [AnswerRef(s, r) for s in ("n0", "n1", "n3", "n7") for r in (1, 2)]
ANSWERS = [(ref, f"{ref.state}/{ref.repeat} " + "x" * 995) for ref in REFS]  # 1,000 bytes


def test_estimate_is_bytes_over_four_plus_overheads() -> None:
    # 300 instructions + ceil(5/4)=2 question + 2 x 250 answers + 8 x 1 pair
    assert estimate_tokens("what?", ["a" * 1000, "b" * 997], 1) == 300 + 2 + 250 + 250 + 8


def test_no_budget_or_a_fitting_packet_is_one_packet() -> None:
    assert len(split_packets("q1", "what?", ANSWERS, 0, None)) == 1
    # whole packet: 300 + 2 + 8 x 250 + 28 x 8 = 2,526 tokens
    assert len(split_packets("q1", "what?", ANSWERS, 0, 2526)) == 1


def test_split_packets_judge_every_pair_exactly_once_blind() -> None:
    packets = split_packets("q1", "what?", ANSWERS, 7, 2000)
    # 2 groups of 4 is the whole packet again; 3 groups (3, 3, 2 answers) fit:
    # (0,1): 6 answers, 9 + 3 + 3 pairs = 1,500 + 302 + 120 = 1,922 tokens
    assert len(packets) == 3
    assert sorted(len(p.pairs) for p, _ in packets) == [6, 7, 15]
    seen = []
    for packet, mapping in packets:
        assert packet.question_id == "q1" and packet.question == "what?"
        assert packet.labels == tuple("ABCDEF"[: len(packet.answers)])
        assert len(packet.answers) < 8
        text = dict(zip(packet.labels, packet.answers, strict=True))
        for a, b in packet.pairs:
            assert packet.labels.index(a) < packet.labels.index(b)
            assert text[a] == dict(ANSWERS)[mapping[a]]  # labels map to their own answers
            seen.append(tuple(sorted((mapping[a], mapping[b]))))
    assert sorted(seen) == sorted(combinations(sorted(REFS), 2))  # all 28, each once
    # nothing in a packet names a state or repeat except the answer texts themselves
    assert all("n0" not in "".join(p.labels) for p, _ in packets)


def test_a_budget_two_answers_cannot_meet_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="max_packet_tokens = 600"):
        split_packets("q1", "what?", ANSWERS, 0, 600)


def test_long_form_prompt_is_versioned_and_distinct() -> None:
    short, long = prompt.prompt_spec(), prompt_long.prompt_spec()
    assert long["version"] == "snapaudit/judge-prompt-long/v1"
    assert long["sha256"] != short["sha256"] and len(long["sha256"]) == 64
    assert "same substantive answer" in prompt_long.SYSTEM
    assert "ignore wording" in prompt_long.SYSTEM.lower()
