"""Read a result dataclass back from the JSON its ``to_json`` wrote: one generic decoder.

:func:`decode` fills each field of a dataclass from the key of the same name, converting by
the field's annotation (lists to tuples, nested result types through their own
``from_json`` when they have one, else through :func:`decode`, object keys to ``int`` for an
``int``-keyed mapping). A missing key leaves the field's default, so a field added with a
default needs no reader change. Scalars are kept as read (an ``int`` written for a ``float``
field stays an ``int``), so that ``to_json`` of what was read writes the same document.
Types whose JSON is not a plain image of their fields (renamed keys, flattened maps) reshape
the object in a small ``from_json`` and call :func:`decode` for the rest.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from typing import Any, TypeVar, Union, get_args, get_origin

from snapaudit.errors import InputError

T = TypeVar("T")

_MAPPINGS = (dict, Mapping)


def decode(cls: type[T], data: object, **given: Any) -> T:
    """An instance of the dataclass ``cls`` from the JSON object ``data``; ``given`` fields
    are taken as they are (e.g. a name that is the object's key in its parent)."""
    if not isinstance(data, Mapping):
        raise InputError(f"results: expected an object for {cls.__name__}, got "
                         f"{type(data).__name__}")
    hints = typing.get_type_hints(cls)
    kwargs = dict(given)
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        if f.init and f.name not in kwargs and f.name in data:
            kwargs[f.name] = value(hints[f.name], data[f.name])
    try:
        return cls(**kwargs)
    except TypeError as exc:
        raise InputError(f"results: {cls.__name__}: {exc}") from None


def value(tp: Any, raw: Any) -> Any:
    """``raw`` (parsed JSON) as the annotation ``tp`` says."""
    if raw is None:
        return None
    origin = get_origin(tp)
    if origin is Union or origin is types.UnionType:
        options = [a for a in get_args(tp) if a is not type(None)]
        return value(options[0], raw) if len(options) == 1 else raw
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        reader = getattr(tp, "from_json", None)
        return reader(raw) if reader is not None else decode(tp, raw)
    if origin is tuple:
        args = get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(value(args[0], x) for x in raw)
        return tuple(value(a, x) for a, x in zip(args, raw, strict=True))
    if origin in _MAPPINGS:
        key_tp, val_tp = get_args(tp) or (str, Any)
        convert = int if key_tp is int else (lambda k: k)
        return {convert(k): value(val_tp, v) for k, v in raw.items()}
    return raw
