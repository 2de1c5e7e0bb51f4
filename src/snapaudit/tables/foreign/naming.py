"""State names from what a log says about its model, short and readable.

A log names its model by a label (a promptfoo provider, an inspect model): the label itself
is the state (characters outside ``[A-Za-z0-9_.-]`` become ``_``). lm-evaluation-harness
names it by its ``model_args`` (``model=old,base_url=...`` or a dict): the state is the model
name (``model``, ``pretrained``, ... ; the last part of a file-system path), then, only among
logs that share that name, the arguments whose values differ (``old-temperature_0.7``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from snapaudit.errors import InputError

_NOT_STATE = re.compile(r"[^A-Za-z0-9_.-]+")
MODEL_KEYS = ("model", "pretrained", "model_name", "engine", "repo_id", "path")

Args = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Hint:
    """What a log suggests about one state: ``label`` (matched by ``--state NAME=LABEL``) and,
    for a log that names its model by arguments, those arguments in the log's order."""

    label: str
    args: Args | None = None
    fallback: str = "state"  # the name when the arguments name no model


def state_name(label: str) -> str:
    """A state name from a log's label: characters outside [A-Za-z0-9_.-] become '_'."""
    return _NOT_STATE.sub("_", label).strip("_") or "state"


def parse_args(value: Any) -> Args:
    """lm-eval's ``model_args``: a dict, or its ``key=value,key=value`` string."""
    if isinstance(value, Mapping):
        return tuple((str(k), _text(v)) for k, v in value.items())
    pairs = []
    for part in str(value).split(","):
        key, sep, val = part.partition("=")
        if key.strip():
            pairs.append((key.strip(), val.strip() if sep else ""))
    return tuple(pairs)


def args_label(args: Args) -> str:
    """``model_args`` as lm-eval's own string syntax (``--state NAME=LABEL`` matches it)."""
    return ",".join(f"{k}={v}" for k, v in args)


def _text(value: Any) -> str:
    if value is None:
        return "None"
    return str(value)


def _model(args: Args, fallback: str) -> str:
    found = dict(args)
    for key in MODEL_KEYS:
        value = found.get(key)
        if value:
            if value.startswith(("/", "./", "../", "~")):
                value = value.rstrip("/").rsplit("/", 1)[-1]
            return state_name(value)
    return state_name(fallback)


def name_hints(hints: Sequence[Hint]) -> dict[str, str]:
    """label -> state name for every distinct hint (see the module docstring)."""
    out: dict[str, str] = {}
    groups: dict[str, list[Hint]] = {}
    for hint in dict.fromkeys(hints):
        if hint.args is None:
            out[hint.label] = state_name(hint.label)
        else:
            groups.setdefault(_model(hint.args, hint.fallback), []).append(hint)
    for base, members in groups.items():
        distinct = list(dict.fromkeys(h.args for h in members if h.args is not None))
        differ = _differing(distinct)
        for hint in members:
            found = dict(hint.args or ())
            suffix = "".join(f"-{state_name(k)}_{state_name(found.get(k, ''))}"
                             for k in differ)
            out[hint.label] = base + suffix
    _check_unique(out, hints)
    return out


def _differing(arg_sets: Sequence[Args]) -> list[str]:
    """The keys (in first-seen order) whose values are not the same in every set."""
    if len(arg_sets) < 2:
        return []
    keys = list(dict.fromkeys(k for args in arg_sets for k, _ in args))
    return [k for k in keys if len({dict(a).get(k) for a in arg_sets}) > 1]


def _check_unique(names: Mapping[str, str], hints: Sequence[Hint]) -> None:
    by_name: dict[str, set[Args | str]] = {}
    for hint in hints:
        by_name.setdefault(names[hint.label], set()).add(
            hint.args if hint.args is not None else hint.label)
    for name, sources in by_name.items():
        if len(sources) > 1:
            raise InputError(f"two different models would both be named state {name!r}; "
                             "name the states with --state NAME=LOG")
