"""A word-level diff of an old and a new answer (longest common subsequence over words).

:func:`word_diff` returns runs ``(op, text)``: ``"="`` words in both, ``"-"`` words only in
the old answer, ``"+"`` words only in the new one; consecutive words of one kind are joined
by single spaces. On a tie a deletion comes before an insertion. A common prefix and suffix
are taken first; when what is left would need more than ``max_cells`` table cells
(:data:`MAX_CELLS`), the middle is shown as one deletion and one insertion.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

Op = Literal["=", "-", "+"]
MAX_CELLS = 250_000
LONG_CHARS = 200


def is_long(old: str, new: str) -> bool:
    """Answers long enough to show a diff for (either over :data:`LONG_CHARS` characters)."""
    return len(old) > LONG_CHARS or len(new) > LONG_CHARS


def word_diff(old: str, new: str, *, max_cells: int = MAX_CELLS) -> list[tuple[Op, str]]:
    a, b = old.split(), new.split()
    head = 0
    while head < len(a) and head < len(b) and a[head] == b[head]:
        head += 1
    tail = 0
    while (tail < len(a) - head and tail < len(b) - head
           and a[len(a) - 1 - tail] == b[len(b) - 1 - tail]):
        tail += 1
    mid_a, mid_b = a[head:len(a) - tail], b[head:len(b) - tail]
    ops: list[tuple[Op, str]] = [("=", w) for w in a[:head]]
    ops += _lcs_ops(mid_a, mid_b, max_cells)
    ops += [("=", w) for w in a[len(a) - tail:]]
    return _join(ops)


def _lcs_ops(a: Sequence[str], b: Sequence[str], max_cells: int) -> list[tuple[Op, str]]:
    if len(a) * len(b) > max_cells:
        return [("-", w) for w in a] + [("+", w) for w in b]
    n, m = len(a), len(b)
    # dp[i][j]: length of the LCS of a[i:] and b[j:]
    dp = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = dp[i], dp[i + 1]
        for j in range(m - 1, -1, -1):
            row[j] = below[j + 1] + 1 if a[i] == b[j] else max(below[j], row[j + 1])
    ops: list[tuple[Op, str]] = []
    i = j = 0
    while i < n and j < m:
        if a[i] == b[j]:
            ops.append(("=", a[i]))
            i, j = i + 1, j + 1
        elif dp[i + 1][j] >= dp[i][j + 1]:
            ops.append(("-", a[i]))
            i += 1
        else:
            ops.append(("+", b[j]))
            j += 1
    ops += [("-", w) for w in a[i:]] + [("+", w) for w in b[j:]]
    return ops


def _join(ops: Sequence[tuple[Op, str]]) -> list[tuple[Op, str]]:
    out: list[tuple[Op, list[str]]] = []
    for op, word in ops:
        if out and out[-1][0] == op:
            out[-1][1].append(word)
        else:
            out.append((op, [word]))
    return [(op, " ".join(words)) for op, words in out]
