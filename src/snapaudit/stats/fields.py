"""Checks of a config dataclass's fields, worded as ``snapaudit._model.describe_error``.

The analysis's configs (:class:`~snapaudit.stats.analysis.AnalysisConfig`, the gate's
:class:`~snapaudit.stats.gate.GateConfig` and :class:`~snapaudit.stats.gate.GateRule`) are
frozen dataclasses, so ``snapaudit analyze`` imports no pydantic (~0.06 s of its start with
the modules pydantic pulls in). Each ``__post_init__`` collects every problem with
:class:`Checks`, normalizes what pydantic's lax mode converted (an int threshold to a float,
a list to a tuple) and raises one :class:`~snapaudit.errors.FieldErrors`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from snapaudit.errors import FieldErrors


def _got(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _type(value: Any, name: str) -> str:
    return f"must be {name}, got {type(value).__name__} {_got(value)}"


class Checks:
    """The problems found so far with an object's fields, in field order."""

    def __init__(self, obj: object) -> None:
        self.obj = obj
        self.errors: list[tuple[str, str]] = []

    def fail(self, field: str, problem: str) -> None:
        self.errors.append((field, problem))

    def set(self, field: str, value: Any) -> None:
        object.__setattr__(self.obj, field, value)  # frozen: the normalized value

    def text(self, field: str, *, optional: bool = False) -> None:
        value = getattr(self.obj, field)
        if not (isinstance(value, str) or (optional and value is None)):
            self.fail(field, _type(value, "a string"))

    def integer(self, field: str, ge: int | None = None) -> None:
        value = getattr(self.obj, field)
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(field, _type(value, "an integer"))
        elif ge is not None and value < ge:
            self.fail(field, f"must be >= {ge}, got {_got(value)}")

    def number(self, field: str, ge: float | None = None, gt: float | None = None,
               lt: float | None = None) -> None:
        value = getattr(self.obj, field)
        if isinstance(value, bool) or not isinstance(value, int | float):
            self.fail(field, _type(value, "a number"))
            return
        self.set(field, float(value))
        if ge is not None and value < ge:
            self.fail(field, f"must be >= {ge}, got {_got(value)}")
        if gt is not None and not value > gt:
            self.fail(field, f"must be > {gt}, got {_got(value)}")
        elif lt is not None and not value < lt:
            self.fail(field, f"must be < {lt}, got {_got(value)}")

    def choice(self, field: str, choices: Sequence[str | None]) -> None:
        value = getattr(self.obj, field)
        if value not in choices:
            named = [repr(c) for c in choices if c is not None]
            expected = named[0] if len(named) == 1 else \
                f"{', '.join(named[:-1])} or {named[-1]}"
            self.fail(field, f"must be one of {expected}, got {_got(value)}")

    def texts(self, field: str, *, min_length: int = 0) -> None:
        """An optional tuple of strings (a list is taken as a tuple)."""
        value = getattr(self.obj, field)
        if value is None:
            return
        if not isinstance(value, list | tuple) or not all(isinstance(v, str) for v in value):
            self.fail(field, _type(value, "a list of strings"))
            return
        self.set(field, tuple(value))
        if len(value) < min_length:
            self.fail(field, f"has {len(value)} item(s); needs at least {min_length}")

    def done(self) -> None:
        if self.errors:
            raise FieldErrors(self.errors)
