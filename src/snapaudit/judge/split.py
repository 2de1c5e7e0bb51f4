"""Split one question's blind packet into smaller blind packets under a token budget.

With 8 long answers a packet may pass the judge's context (``[judge] max_packet_tokens``).
The answers are dealt into ``m`` groups (the smallest ``m`` whose packets fit); the packet of
groups ``(i, j)``, ``i < j``, holds the answers of both groups and decides every pair across
them, plus the pairs within group ``i`` (and within ``j``) the first time that group appears.
Together the packets decide every pair exactly once. Each sub-packet is built like a whole
one (:func:`snapaudit.judge.packets.build_packet`): anonymous labels, its own seeded
permutation (keyed by ``question_id#k``), nothing but the question and the answer texts.

Token estimate (version ``SPLIT_VERSION``): UTF-8 bytes / 4, rounded up, of the question and
every answer, plus 8 per pair to decide and ``OVERHEAD_TOKENS`` for the instructions.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace
from itertools import combinations

from snapaudit.errors import ConfigError
from snapaudit.judge.base import JudgePacket
from snapaudit.judge.packets import build_packet, label_permutation, question_seed
from snapaudit.tables import AnswerRef

SPLIT_VERSION = "snapaudit/judge-split/v1"
OVERHEAD_TOKENS = 300
PAIR_TOKENS = 8

Packet = tuple[JudgePacket, dict[str, AnswerRef]]


def text_tokens(text: str) -> int:
    return math.ceil(len(text.encode("utf-8")) / 4)


def estimate_tokens(question: str, answers: Sequence[str], pairs: int) -> int:
    return (OVERHEAD_TOKENS + text_tokens(question) + sum(text_tokens(a) for a in answers)
            + PAIR_TOKENS * pairs)


def split_packets(question_id: str, question: str, answers: Sequence[tuple[AnswerRef, str]],
                  seed: int, max_tokens: int | None) -> list[Packet]:
    """One packet when it fits (or no budget), else the fewest groups whose packets fit."""
    whole = build_packet(question_id, question, answers, seed)
    n = len(answers)
    if max_tokens is None or estimate_tokens(question, [t for _, t in answers],
                                             n * (n - 1) // 2) <= max_tokens:
        return [whole]
    canonical = sorted(answers, key=lambda item: item[0])
    # deal answers into groups in the seeded order of the whole packet's permutation
    order = label_permutation(n, question_seed(seed, question_id))
    for m in range(2, n + 1):
        groups = [[canonical[i] for i in order[g::m]] for g in range(m)]
        plan = _plan(groups)
        if all(estimate_tokens(question, [t for _, t in items], len(pairs)) <= max_tokens
               for items, pairs in plan):
            return [_sub_packet(question_id, question, items, pairs, seed, k)
                    for k, (items, pairs) in enumerate(plan, start=1)]
    raise ConfigError(f"question {question_id}: two of its answers together exceed "
                      f"judge.max_packet_tokens = {max_tokens}; raise the budget")


def _plan(groups: list[list[tuple[AnswerRef, str]]]
          ) -> list[tuple[list[tuple[AnswerRef, str]], list[tuple[AnswerRef, AnswerRef]]]]:
    """Per group pair (i, j): its answers and the ref pairs it decides (each pair once)."""
    done_within: set[int] = set()
    plan = []
    for i, j in combinations(range(len(groups)), 2):
        items = groups[i] + groups[j]
        pairs = [(a[0], b[0]) for a in groups[i] for b in groups[j]]
        for g in (i, j):
            if g not in done_within:
                done_within.add(g)
                pairs += [(a[0], b[0]) for a, b in combinations(groups[g], 2)]
        plan.append((items, pairs))
    return plan


def _sub_packet(question_id: str, question: str, items: list[tuple[AnswerRef, str]],
                pairs: list[tuple[AnswerRef, AnswerRef]], seed: int, k: int) -> Packet:
    packet, mapping = build_packet(f"{question_id}#{k}", question, items, seed)
    label_of = {ref: label for label, ref in mapping.items()}
    wanted = {tuple(sorted((label_of[a], label_of[b]),
                           key=packet.labels.index)) for a, b in pairs}
    return replace(packet, question_id=question_id,
                   pairs=tuple(p for p in packet.pairs if p in wanted)), mapping
