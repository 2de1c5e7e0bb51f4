"""The report as data: sections of paragraphs, tables and figures, rendered twice.

:mod:`snapaudit.report.html` and :mod:`snapaudit.report.markdown` render the same
:class:`Report`, so the two files state the same content. All text here is plain text;
the renderers escape it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from snapaudit.report.attribution import AttributedQuestion
    from snapaudit.report.trajectories import TrajectoryGroup


@dataclass(frozen=True)
class Table:
    caption: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Figure:
    """An inline SVG (HTML) with the data it draws as a table (Markdown and screen readers)."""

    caption: str
    svg: str
    data: Table


@dataclass(frozen=True)
class Section:
    title: str
    paragraphs: tuple[str, ...] = ()
    tables: tuple[Table, ...] = ()
    figures: tuple[Figure, ...] = ()


@dataclass(frozen=True)
class AnswerGroup:
    text: str
    count: int
    em: str  # "M", "C" (contains a gold answer), "N" or "" without gold


@dataclass(frozen=True)
class ComparisonRow:
    id: str
    question: str
    old: tuple[AnswerGroup, ...]
    new: tuple[AnswerGroup, ...]
    verdicts: str
    d_i: float
    contribution_pp: float
    tags: tuple[str, ...]
    path: str = ""
    plant: str = ""
    evidence: tuple[dict[str, Any], ...] = ()
    others: dict[str, tuple[AnswerGroup, ...]] = field(default_factory=dict)
    # (state, its distinct trajectories) of old and new, when the answers carry steps
    trajectories: tuple[tuple[str, tuple[TrajectoryGroup, ...]], ...] = ()

    def to_json(self) -> dict[str, Any]:
        def groups(gs: Sequence[AnswerGroup]) -> list[list[Any]]:
            return [[g.text, g.count, g.em] for g in gs]

        out = {"id": self.id, "question": self.question, "old": groups(self.old),
               "new": groups(self.new), "verdicts": self.verdicts, "d_i": self.d_i,
               "contribution_pp": self.contribution_pp, "tags": list(self.tags),
               "path": self.path, "plant": self.plant, "evidence": list(self.evidence),
               "others": {s: groups(g) for s, g in self.others.items()}}
        if self.trajectories:  # only then: rows of answers without steps are unchanged
            out["trajectories"] = {s: [g.to_json() for g in gs] for s, gs in self.trajectories}
        return out


@dataclass(frozen=True)
class Comparison:
    old: str
    new: str
    kernel: str  # the kernel whose verdicts and D_i are shown: "semantic (judge X)" / "exact"
    rows: tuple[ComparisonRow, ...]
    unchanged: int  # questions not listed
    truncated: int  # changed questions left out beyond MAX_ROWS
    filters: tuple[tuple[str, str], ...]
    gold: bool


@dataclass(frozen=True)
class Report:
    title: str
    subtitle: str
    verdict: str
    verdict_ok: bool | None
    sections: tuple[Section, ...]
    states: tuple[str, ...] = ()
    comparison: Comparison | None = None
    small_sample: str | None = None  # the verdict's small-sample warning, when there is one
    attribution: tuple[AttributedQuestion, ...] = ()  # snapaudit attribute's, when run


def num(value: Any, digits: int = 2) -> str:
    """A number as the report prints it; '-' for missing values."""
    if value is None or isinstance(value, bool):
        return "-" if value is None else ("yes" if value else "no")
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "-"
        return f"{value:.{digits}f}"
    return str(value)


def interval(value: Any, digits: int = 2) -> str:
    if isinstance(value, (list, tuple)) and len(value) == 2:
        return f"[{num(value[0], digits)}, {num(value[1], digits)}]"
    return "-"
