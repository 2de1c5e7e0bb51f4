"""Answer trajectories: the path letters (X→Y→X) and Table 3 of the strict flips.

The per-question comparison view is :mod:`snapaudit.report.comparison`.
"""

from __future__ import annotations

from collections import defaultdict

from snapaudit.report.load import RunView
from snapaudit.report.model import Table
from snapaudit.stats.normalize import normalize_nq
from snapaudit.tables import AnswerRow, PairLabel


def _by_question(view: RunView) -> dict[str, dict[str, list[AnswerRow]]]:
    grid: dict[str, dict[str, list[AnswerRow]]] = defaultdict(lambda: defaultdict(list))
    for row in view.answers:
        grid[row.question_id][row.state].append(row)
    for states in grid.values():
        for rows in states.values():
            rows.sort(key=lambda a: a.repeat)
    return grid


def _labels(view: RunView) -> dict[str, list[PairLabel]]:
    out: dict[str, list[PairLabel]] = defaultdict(list)
    for lab in view.labels:
        out[lab.question_id].append(lab)
    return out


def _em(answer: str, gold: tuple[str, ...] | None) -> str:
    if gold is None:
        return ""
    norm = normalize_nq(answer)
    return "M" if any(normalize_nq(g) == norm for g in gold) else "N"


def _agree(a: list[AnswerRow], b: list[AnswerRow], labels: list[PairLabel]) -> bool:
    sa, sb = a[0].state, b[0].state
    judged = [lab.same for lab in labels
              if {lab.a.state, lab.b.state} == {sa, sb} and sa != sb]
    if judged:
        return all(judged)
    return {normalize_nq(x.answer) for x in a} == {normalize_nq(x.answer) for x in b}


def path_letters(per_state: dict[str, list[AnswerRow]], states: list[str],
                 labels: list[PairLabel]) -> str:
    """Trajectory like ``X→Y→Y``: a state reuses the letter of the first earlier state it
    agrees with (judge labels when present, normalized answers otherwise)."""
    letters: dict[str, str] = {}
    for s in states:
        if s not in per_state:
            continue
        for t in letters:
            if _agree(per_state[t], per_state[s], labels):
                letters[s] = letters[t]
                break
        else:
            letters[s] = "XYZWVUTS"[len(set(letters.values())) % 8]
    return "→".join(letters[s] for s in states if s in letters)


def trajectory_table(view: RunView, qids: list[str], limit: int = 12) -> Table:
    """Table 3: answer trajectories of the flagged questions (first ``limit``)."""
    grid, labels, states = _by_question(view), _labels(view), view.states
    rows = []
    for qid in sorted(qids)[:limit]:
        per_state = grid.get(qid)
        if not per_state:
            continue
        gold = view.gold.get(qid) if view.gold is not None else None
        cells = []
        for s in states:
            answers = per_state.get(s, [])
            marks = "/".join(_em(a.answer, gold) for a in answers)
            cells.append(" / ".join(a.answer for a in answers) + (f" [{marks}]" if gold else ""))
        question = next(iter(per_state.values()))[0].question or qid
        rows.append((question, *cells, path_letters(per_state, states, labels[qid])))
    if not rows:
        rows.append(("(no strict flips)", *["" for _ in states], ""))
    return Table("Table 3. Answer trajectories of the strict flips",
                 ("question", *[f"{s} answers" for s in states], "path"), tuple(rows))
