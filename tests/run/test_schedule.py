"""Williams rows, the answer schedule and per-attempt seeds."""

from __future__ import annotations

from collections import Counter

import pytest

from snapaudit.run.execution.schedule import (
    answer_schedule,
    derive_seed,
    state_order,
    williams_rows,
)


@pytest.mark.parametrize("n", [2, 3, 4, 5, 6, 7])
def test_williams_every_state_follows_every_other_equally(n: int) -> None:
    rows = williams_rows(n)
    assert len(rows) == (n if n % 2 == 0 else 2 * n)
    for row in rows:
        assert sorted(row) == list(range(n))
    for pos in range(n):  # each state appears in each position equally often
        assert len(Counter(row[pos] for row in rows)) == n
    follows = Counter((row[i], row[i + 1]) for row in rows for i in range(n - 1))
    expected = 1 if n % 2 == 0 else 2
    assert set(follows) == {(a, b) for a in range(n) for b in range(n) if a != b}
    assert set(follows.values()) == {expected}


def test_williams_four_by_hand() -> None:
    assert williams_rows(4) == [[0, 1, 3, 2], [1, 2, 0, 3], [2, 3, 1, 0], [3, 0, 2, 1]]


def test_repeats_alternate_direction() -> None:
    states = ["a", "b", "c", "d"]
    assert state_order(states, 1, 1) == ["b", "c", "a", "d"]
    assert state_order(states, 1, 2) == ["d", "a", "c", "b"]
    assert state_order(states, 5, 3) == ["b", "c", "a", "d"]  # 5 mod 4 = row 1, forward


def test_answer_schedule_covers_every_cell_once_in_question_order() -> None:
    calls = answer_schedule(["q1", "q2", "q3"], ["old", "new"], 3)
    assert len(calls) == 3 * 2 * 3
    assert len({(c.question_id, c.state, c.repeat) for c in calls}) == 18
    assert [(c.state, c.repeat) for c in calls[:6]] == [
        ("old", 1), ("new", 1), ("new", 2), ("old", 2), ("old", 3), ("new", 3)]
    assert [(c.state, c.repeat) for c in calls[6:8]] == [("new", 1), ("old", 1)]


def test_derive_seed_is_a_documented_hash() -> None:
    import hashlib

    digest = hashlib.sha256(b"snapaudit-seed-v1|7|answer|q1|old|1|2").digest()
    assert derive_seed(7, "answer", "q1|old|1", 2) == int.from_bytes(digest[:4], "big") & (
        2**31 - 1)
    assert derive_seed(7, "answer", "q1|old|1", 3) != derive_seed(7, "answer", "q1|old|1", 2)
