"""Call order: Williams-square rows per question, repeats alternating direction.

For ``n`` states the Williams square has ``n`` rows (``n`` even) or ``2n`` rows (``n`` odd:
the square and its mirror image), and across its rows every state immediately follows every
other state equally often. Question ``i`` of the cohort (in manifest order, which is already
a seeded hash order) gets row ``i mod len(rows)``. Repeat 1 visits the states in the row's
order, repeat 2 in reverse, repeat 3 forward again, and so on. The schedule is a pure
function of the bound protocol and the cohort, so it is part of what the protocol hash binds.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass


def williams_rows(n: int) -> list[list[int]]:
    """Rows of a Williams design for ``n`` treatments (indices ``0..n-1``)."""
    if n < 1:
        raise ValueError("need at least one state")
    first: list[int] = [0]
    lo, hi = 1, n - 1
    take_lo = True
    while len(first) < n:
        if take_lo:
            first.append(lo)
            lo += 1
        else:
            first.append(hi)
            hi -= 1
        take_lo = not take_lo
    rows = [[(x + r) % n for x in first] for r in range(n)]
    if n % 2 == 1 and n > 1:
        rows += [list(reversed(row)) for row in rows]
    return rows


@dataclass(frozen=True, slots=True)
class ScheduledCall:
    question_index: int
    question_id: str
    state: str
    repeat: int


def state_order(states: Sequence[str], question_index: int, repeat: int) -> list[str]:
    """The order question ``question_index`` visits the states in repeat ``repeat``."""
    rows = williams_rows(len(states))
    row = [states[j] for j in rows[question_index % len(rows)]]
    return row if repeat % 2 == 1 else list(reversed(row))


def answer_schedule(
    question_ids: Sequence[str], states: Sequence[str], repeats: int
) -> list[ScheduledCall]:
    """Every answer cell in dispatch order: question by question, repeat by repeat."""
    out: list[ScheduledCall] = []
    for i, qid in enumerate(question_ids):
        for rep in range(1, repeats + 1):
            out.extend(ScheduledCall(i, qid, s, rep) for s in state_order(states, i, rep))
    return out


def derive_seed(design_seed: int, stage: str, cell_key: str, attempt: int) -> int:
    """A per-attempt seed in ``[0, 2**31)``: the first 4 bytes of
    ``SHA-256("snapaudit-seed-v1|{design_seed}|{stage}|{cell_key}|{attempt}")``, masked."""
    text = f"snapaudit-seed-v1|{design_seed}|{stage}|{cell_key}|{attempt}"
    digest = hashlib.sha256(text.encode("utf-8")).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFF_FFFF
