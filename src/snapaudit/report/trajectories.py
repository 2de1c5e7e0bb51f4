"""A changed question's trajectories in the comparison view: old and new side by side.

For each of the two states, the distinct trajectories of its repeats (a count when repeats
agree), step by step: the tool, its input and the documents it returned; each new step also
names the documents that entered and left against the same step of the old state's most
frequent trajectory. Two filters select the changed questions whose answers moved with the
same queries (the index side) or with different ones (the agent side), as
``trajectory.changed_pairs`` counts them. Plain data; the renderers escape.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from snapaudit.stats.normalize import Normalizer
from snapaudit.tables import AnswerRow, Step


@dataclass(frozen=True)
class StepView:
    tool: str
    input: str
    doc_ids: tuple[str, ...]
    entered: tuple[str, ...] = ()
    left: tuple[str, ...] = ()

    def text(self) -> str:
        docs = ", ".join(self.doc_ids) or "no documents"
        moved = [*(f"+{d}" for d in self.entered), *(f"-{d}" for d in self.left)]
        return f"{self.tool} “{self.input}” → {docs}" + (f" ({' '.join(moved)})" if moved
                                                        else "")


@dataclass(frozen=True)
class TrajectoryGroup:
    """One distinct trajectory of a state and how many of its repeats took it."""

    count: int
    steps: tuple[StepView, ...]

    def to_json(self) -> dict[str, Any]:
        return {"count": self.count, "steps": [s.text() for s in self.steps]}


def trajectory_sides(per_state: Mapping[str, Sequence[AnswerRow]], old: str, new: str
                     ) -> tuple[tuple[str, tuple[TrajectoryGroup, ...]], ...]:
    """(state, its trajectory groups) of old and new; () when no row has steps."""
    if not any(r.steps is not None for s in (old, new) for r in per_state.get(s, ())):
        return ()
    groups = {s: _groups([r.steps or () for r in per_state.get(s, ())]) for s in (old, new)}
    base = groups[old][0][0] if groups[old] else ()
    return tuple((s, tuple(TrajectoryGroup(count, tuple(
        _view(step, base[j] if s == new and j < len(base) else None)
        for j, step in enumerate(steps))) for steps, count in groups[s]))
        for s in (old, new))


def _groups(trajectories: Sequence[tuple[Step, ...]]) -> list[tuple[tuple[Step, ...], int]]:
    """The distinct trajectories, most frequent first (ties: first seen)."""
    counts: dict[tuple[Step, ...], int] = {}
    for t in trajectories:
        counts[t] = counts.get(t, 0) + 1
    return sorted(counts.items(), key=lambda kv: -kv[1])


def _view(step: Step, before: Step | None) -> StepView:
    if before is None:
        return StepView(step.tool, step.input, step.doc_ids)
    return StepView(step.tool, step.input, step.doc_ids,
                    tuple(d for d in step.doc_ids if d not in before.doc_ids),
                    tuple(d for d in before.doc_ids if d not in step.doc_ids))


def changed_with(per_state: Mapping[str, Sequence[AnswerRow]], old: str, new: str,
                 normalize: Normalizer, same_queries: bool) -> bool:
    """Whether some old x new pair has different normalized answers and (``same_queries``)
    the same normalized queries, or (not) different ones."""
    def queries(row: AnswerRow) -> tuple[str, ...]:
        return tuple(normalize(s.input) for s in row.steps or ())

    return any(normalize(a.answer) != normalize(b.answer)
               and (queries(a) == queries(b)) == same_queries
               for a in per_state.get(old, ()) for b in per_state.get(new, ()))


Test = Callable[[Mapping[str, Sequence[AnswerRow]], str, str, Normalizer], bool]
FILTERS: tuple[tuple[str, str, Test], ...] = (
    ("same_queries", "changed with the same queries (index side)",
     lambda rows, old, new, norm: changed_with(rows, old, new, norm, True)),
    ("different_queries", "changed with different queries (agent side)",
     lambda rows, old, new, norm: changed_with(rows, old, new, norm, False)),
)
