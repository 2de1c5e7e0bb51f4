"""Small builders for hand-made answer tables."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from snapaudit.tables import AnswerRef, AnswerRow, PairLabel


def rows(table: Mapping[str, Mapping[str, Sequence[str]]]) -> list[AnswerRow]:
    """{qid: {state: [answer by repeat]}} -> answer rows."""
    return [AnswerRow(q, s, j, a) for q, per in table.items() for s, answers in per.items()
            for j, a in enumerate(answers, start=1)]


def ref(text: str) -> AnswerRef:
    """'A1' -> AnswerRef('A', 1)."""
    return AnswerRef(text[:-1], int(text[-1]))


def labels_from_groups(qid: str, groups: Mapping[str, str], judge: str = "default",
                       override: Mapping[tuple[str, str], bool] | None = None) -> list[PairLabel]:
    """Label every pair of the refs in ``groups`` (ref text -> fact); ``override`` forces some."""
    names = sorted(groups)
    out = []
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            same = groups[a] == groups[b]
            if override and (a, b) in override:
                same = override[(a, b)]
            out.append(PairLabel(qid, ref(a), ref(b), same, judge))
    return out


def unbiased_mmd2(xs: list[str], ys: list[str]) -> float:
    """Independent unbiased squared MMD with the equality kernel (ordered pairs j != l)."""
    m, n = len(xs), len(ys)
    kxx = sum(xs[i] == xs[j] for i in range(m) for j in range(m) if i != j) / (m * (m - 1))
    kyy = sum(ys[i] == ys[j] for i in range(n) for j in range(n) if i != j) / (n * (n - 1))
    kxy = sum(x == y for x in xs for y in ys) / (m * n)
    return kxx + kyy - 2 * kxy
