"""The base of every typed, frozen, validated record and config model."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError


class Frozen(BaseModel):
    """Frozen, strict about unknown keys: an unknown key in a protocol is an error."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=True)


def _got(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def describe_error(err: Mapping[str, Any]) -> str:
    """One pydantic error in plain words ("must be an integer, got '2'"), without pydantic's
    own phrasing ("Input should be ...", "Value error, ...")."""
    kind, ctx, value = str(err.get("type", "")), err.get("ctx") or {}, err.get("input")
    if kind == "value_error":
        return str(ctx.get("error", err.get("msg", ""))).removeprefix("Value error, ")
    if kind == "extra_forbidden":
        return "unknown key"
    if kind == "missing":
        return "missing (required)"
    bounds = {"greater_than_equal": ">=", "greater_than": ">", "less_than_equal": "<=",
              "less_than": "<"}
    if kind in bounds:
        limit = next(iter(ctx.values()), "?")
        return f"must be {bounds[kind]} {limit}, got {_got(value)}"
    types = {"int": "an integer", "float": "a number", "bool": "true or false",
             "string": "a string", "list": "a list", "dict": "a table", "tuple": "a list"}
    for prefix, name in types.items():
        if kind.startswith(prefix + "_"):
            return f"must be {name}, got {type(value).__name__} {_got(value)}"
    if kind == "literal_error":
        return f"must be one of {ctx.get('expected', '?')}, got {_got(value)}"
    if kind in ("too_short", "too_long"):
        return f"has {ctx.get('actual_length', '?')} item(s); " + (
            f"needs at least {ctx.get('min_length')}" if kind == "too_short"
            else f"allows at most {ctx.get('max_length')}")
    return str(err.get("msg", kind)).removeprefix("Value error, ")


def describe_errors(exc: ValidationError, names: Mapping[str, str] | None = None) -> list[str]:
    """Every error of ``exc`` as ``"<where>: <problem>"``; ``names`` maps a field to what the
    user typed (an option such as ``--draws``), else the dotted key is named."""
    lines = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        where = (names or {}).get(loc, loc)
        problem = describe_error(err)
        lines.append(f"{where}: {problem}" if where else problem)
    return lines
