"""Trajectories: the ``steps`` an agent took before its answer, checked and bounded.

A reply may carry ``steps`` (a Python target's mapping, whose steps may also be ``Step``
records; an HTTP reply through ``steps_path``; an answers-table row): a list of
``{"tool": str, "input": str, "doc_ids": [str, ...], "output"?: str}``. :func:`parse_steps`
turns one into :class:`~snapaudit.tables.records.Step` records or raises
:class:`StepsError` with a one-line message naming the step and the cause (the caller adds
where: a transport-invalid attempt, or the file and line). The bounds keep one answer cell
small enough for the ledger: at most :data:`MAX_STEPS` steps and :data:`MAX_STEPS_BYTES`
UTF-8 bytes of text in all. :func:`steps_record` is the JSON form stored in a ledger cell
and a table row (``output`` only when given), which :func:`parse_steps` reads back into
equal records.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any

import msgspec

from snapaudit.hashing import sha256_text
from snapaudit.tables.records import MAX_STEP_DOC_IDS, MAX_TOOL_CHARS, Step

MAX_STEPS = 256
MAX_STEPS_BYTES = 1 << 20  # text of all steps (tools, inputs, ids, outputs), UTF-8
FIELDS = ("tool", "input", "doc_ids", "output")


class StepsError(ValueError):
    """A ``steps`` value that is not a valid trajectory (the message is one line)."""


def step_input(args: Any) -> str:
    """The arguments of one tool call as a step's ``input`` (the agent adapters' and the
    inspect_ai import's): a string as is, a single string argument as is (a search tool's
    query), anything else as canonical JSON (sorted keys, no spaces; a value JSON cannot hold
    written as its ``repr``), so equal arguments give equal inputs in any order."""
    if isinstance(args, str):
        return args
    if isinstance(args, Mapping) and len(args) == 1:
        (value,) = args.values()
        if isinstance(value, str):
            return value
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=repr)


# a trajectory as msgspec checks it (a typed answers line's ``steps``: snapaudit.tables.jsonl)
STEPS = Annotated[list[Step], msgspec.Meta(max_length=MAX_STEPS)]
_ENCODE = msgspec.json.Encoder().encode


def parse_steps(value: Any, *, ids_as_text: bool = False) -> tuple[Step, ...]:
    """The steps of ``value`` (a list of step objects); ``ids_as_text``: integer doc ids are
    taken as their decimal text (what a system may send), else every id must be a string."""
    if not ids_as_text and isinstance(value, list):
        try:  # checked by msgspec; anything it refuses is checked below for the message
            steps = checked_lines(msgspec.convert(value, STEPS), value)
        except msgspec.ValidationError:
            steps = None
        if steps is not None:
            return steps
    return _checked(value, ids_as_text)


def checked_lines(lines: list[Step], source: Any = None) -> tuple[Step, ...] | None:
    """Steps msgspec decoded as steps when every tool name is not blank and their text fits
    the bound (their JSON, of ``source`` or of the lines, is longer than their text: the
    exact sum seldom runs), else None."""
    if not all([x.tool.strip() for x in lines]):
        return None
    size = len(_ENCODE(lines if source is None else source))
    if size > MAX_STEPS_BYTES and sum(_size(x) for x in lines) > MAX_STEPS_BYTES:
        return None
    return tuple(lines)


def _checked(value: Any, ids_as_text: bool) -> tuple[Step, ...]:
    """:func:`parse_steps` check by check, each failure with its one-line message."""
    if not isinstance(value, list | tuple):
        raise StepsError(f"'steps' must be a list of steps, got {type(value).__name__}")
    if len(value) > MAX_STEPS:
        raise StepsError(f"'steps' has {len(value)} steps; at most {MAX_STEPS}")
    steps = tuple(_step(i, item, ids_as_text) for i, item in enumerate(value))
    size = sum(_size(s) for s in steps)
    if size > MAX_STEPS_BYTES:
        raise StepsError(f"'steps' hold {size} bytes of text; at most {MAX_STEPS_BYTES}")
    return steps


def _step(i: int, item: Any, ids_as_text: bool) -> Step:
    where = f"steps[{i}]"
    if isinstance(item, Step):  # a Python target may build the records itself
        item = msgspec.structs.asdict(item)
    if not isinstance(item, Mapping):
        raise StepsError(f"{where} must be an object {{tool, input, doc_ids, output?}}, got "
                         f"{type(item).__name__}")
    extra = sorted(str(k) for k in set(item) - set(FIELDS))
    if extra:
        raise StepsError(f"{where}: unknown field(s): {', '.join(extra)}")
    tool, text = item.get("tool"), item.get("input")
    if not isinstance(tool, str) or not tool.strip():
        raise StepsError(f"{where}.tool must be a nonempty string, got {_kind(tool)}")
    if len(tool) > MAX_TOOL_CHARS:
        raise StepsError(f"{where}.tool has {len(tool)} characters; at most {MAX_TOOL_CHARS}")
    if not isinstance(text, str):
        raise StepsError(f"{where}.input must be a string, got {_kind(text)}")
    output = item.get("output")
    if output is not None and not isinstance(output, str):
        raise StepsError(f"{where}.output must be a string, got {_kind(output)}")
    return Step(tool, text, _ids(where, item.get("doc_ids", []), ids_as_text), output)


def _ids(where: str, ids: Any, ids_as_text: bool) -> tuple[str, ...]:
    if ids is None:
        return ()
    kinds = (str, int) if ids_as_text else (str,)
    if not isinstance(ids, list | tuple) or not all(
            isinstance(d, kinds) and not isinstance(d, bool) for d in ids):
        raise StepsError(f"{where}.doc_ids must be a list of {'ids' if ids_as_text else 'strings'}")
    if len(ids) > MAX_STEP_DOC_IDS:
        raise StepsError(f"{where}.doc_ids has {len(ids)} ids; at most {MAX_STEP_DOC_IDS}")
    return tuple(str(d) for d in ids)


def _kind(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__


def _size(step: Step) -> int:
    texts = (step.tool, step.input, *step.doc_ids, step.output or "")
    return sum(len(t.encode("utf-8", "surrogatepass")) for t in texts)


def steps_record(steps: Sequence[Step]) -> list[dict[str, Any]]:
    """The JSON form of ``steps`` (a ledger cell's, a table row's): ``output`` only when
    given."""
    out: list[dict[str, Any]] = []
    for s in steps:
        obj: dict[str, Any] = {"tool": s.tool, "input": s.input, "doc_ids": list(s.doc_ids)}
        if s.output is not None:
            obj["output"] = s.output
        out.append(obj)
    return out


PUBLIC = "sha256:"  # the prefix of a step text an artifact publishes as its hash


def public_payload(payload: Mapping[str, Any], normalize: Callable[[str], str]
                   ) -> Mapping[str, Any]:
    """An answer payload as an artifact publishes it: each step's input replaced by
    ``sha256:`` and the SHA-256 of its normalized text (equal after normalization, equal
    hashes: the ``queries`` kernel and the first divergences recompute the same), its output
    by the SHA-256 of its text; tools and document ids kept. A query often repeats the
    question, which an artifact never publishes. A payload without steps is returned as is
    (the same object)."""
    steps = payload.get("steps")
    if not steps:
        return payload
    return {**payload, "steps": [_public(step, normalize) for step in steps]}


def _public(step: Mapping[str, Any], normalize: Callable[[str], str]) -> dict[str, Any]:
    out = {**step, "input": PUBLIC + sha256_text(normalize(str(step["input"])))}
    if isinstance(step.get("output"), str):
        out["output"] = PUBLIC + sha256_text(step["output"])
    return out
