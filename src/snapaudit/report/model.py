"""The report as data: sections of paragraphs, tables and figures, rendered twice.

:mod:`snapaudit.report.html` and :mod:`snapaudit.report.markdown` render the same
:class:`Report`, so the two files state the same content. All text here is plain text;
the renderers escape it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any


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
class Report:
    title: str
    subtitle: str
    verdict: str
    verdict_ok: bool | None
    sections: tuple[Section, ...]
    drilldown: tuple[dict[str, Any], ...] = field(default_factory=tuple)
    states: tuple[str, ...] = ()


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
