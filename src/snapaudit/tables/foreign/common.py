"""What every foreign-log reader yields, and the one place that turns it into answer tables.

A reader yields :class:`Call` records (one per sample and repeat) for one :class:`Source`;
:func:`assemble` names the states, checks repeats, ids, tasks and errored calls, and builds
the answer rows, the gold and the provenance; :func:`write_import` writes them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snapaudit.errors import InputError
from snapaudit.tables.answers import validate_answers, write_answers
from snapaudit.tables.gold import write_gold
from snapaudit.tables.records import AnswerRow

_NOT_STATE = re.compile(r"[^A-Za-z0-9_.-]+")


@dataclass(frozen=True, slots=True)
class Call:
    """One sample's answer at one repeat, as the tool logged it."""

    question_id: str
    repeat: int
    answer: str | None  # None when the call errored
    state_hint: str  # the state name the log suggests (model, provider label, ...)
    record: str  # how to find it in the log, for error messages
    target: tuple[str, ...] | None = None
    doc_ids: tuple[str, ...] | None = None
    question: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class Source:
    """One log file read by one reader."""

    path: str
    tool: str
    tool_version: str | None
    task: str | None
    calls: tuple[Call, ...]
    extra: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Imported:
    rows: tuple[AnswerRow, ...]
    gold: dict[str, tuple[str, ...]]
    provenance: dict[str, Any]


def state_name(hint: str) -> str:
    """A state name from a log's label: characters outside [A-Za-z0-9_.-] become '_'."""
    return _NOT_STATE.sub("_", hint).strip("_") or "state"


def file_facts(path: str) -> dict[str, Any]:
    data = Path(path).read_bytes()
    return {"path": path, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def assemble(sources: Sequence[Source], *, states: Mapping[str, str] | None = None,
             allow_errors: bool = False) -> Imported:
    """Answer rows, gold and provenance from ``sources``.

    ``states`` maps a source path or a state hint (a model or provider label) to the state
    name; otherwise the hint itself names the state (see :func:`state_name`). An errored
    call is an error naming it unless ``allow_errors``: then its whole question is left out
    of every state, and listed in the provenance.
    """
    states = dict(states or {})
    tasks = {s.task for s in sources if s.task is not None}
    if len(tasks) > 1:
        raise InputError(f"the logs are of different tasks ({', '.join(sorted(tasks))}); "
                         "import one task at a time", path=sources[0].path)
    where: dict[tuple[str, str, int], str] = {}
    calls: list[tuple[str, Call, Source]] = []
    errored: list[dict[str, Any]] = []
    for source in sources:
        for call in source.calls:
            state = states.get(source.path) or states.get(call.state_hint) \
                or state_name(call.state_hint)
            key = (call.question_id, state, call.repeat)
            if key in where:
                raise InputError(f"{call.record}: question {call.question_id!r} repeat "
                                 f"{call.repeat} of state {state!r} is also in {where[key]}; "
                                 "name the states with --state", path=source.path)
            where[key] = f"{source.path} ({call.record})"
            if call.error is not None or call.answer is None:
                if not allow_errors:
                    raise InputError(f"{call.record}: the call errored ({call.error}); "
                                     "re-run it, or pass --allow-errors to leave its question "
                                     "out of every state", path=source.path)
                errored.append({"path": source.path, "record": call.record,
                                "question_id": call.question_id, "state": state,
                                "error": call.error})
            calls.append((state, call, source))
    dropped = {e["question_id"] for e in errored}
    rows = [AnswerRow(c.question_id, state, c.repeat, c.answer or "", c.doc_ids, c.question)
            for state, c, _s in calls if c.question_id not in dropped]
    _check_grid(rows, calls)
    validate_answers(rows, path=sources[0].path)
    gold = _gold(calls, dropped)
    return Imported(tuple(rows), gold, _provenance(sources, calls, errored, sorted(dropped)))


def _check_grid(rows: Sequence[AnswerRow], calls: Sequence[tuple[str, Call, Source]]) -> None:
    if not rows:
        raise InputError("no answers to import (every question errored?)")
    by_state: dict[str, set[str]] = {}
    paths: dict[str, str] = {}
    repeats: dict[str, int] = {}
    for row in rows:
        by_state.setdefault(row.state, set()).add(row.question_id)
        repeats[row.state] = max(repeats.get(row.state, 0), row.repeat)
    for state, _call, source in calls:
        paths.setdefault(state, source.path)
    for state, count in sorted(repeats.items()):
        if count < 2:
            raise InputError(f"state {state!r} has only {count} repeat; re-run with repeats "
                             "(inspect --epochs 2, promptfoo --repeat 2, lm-eval repeats: 2)",
                             path=paths[state])
    ordered = sorted(by_state)
    first = by_state[ordered[0]]
    for state in ordered[1:]:
        other = by_state[state]
        if other != first:
            odd = sorted(first ^ other)[:5]
            raise InputError(f"question ids of state {state!r} do not match those of state "
                             f"{ordered[0]!r} (e.g. {', '.join(odd)})", path=paths[state])


def _gold(calls: Sequence[tuple[str, Call, Source]],
          dropped: set[str]) -> dict[str, tuple[str, ...]]:
    gold: dict[str, tuple[str, ...]] = {}
    for _state, call, source in calls:
        if call.target is None or call.question_id in dropped:
            continue
        seen = gold.setdefault(call.question_id, call.target)
        if seen != call.target:
            raise InputError(f"{call.record}: target {list(call.target)} differs from "
                             f"{list(seen)} for the same question (mixed tasks?)",
                             path=source.path)
    return gold


def _provenance(sources: Sequence[Source], calls: Sequence[tuple[str, Call, Source]],
                errored: list[dict[str, Any]], dropped: list[str]) -> dict[str, Any]:
    entries = []
    for source in sources:
        mine = [(state, c) for state, c, s in calls if s is source]
        entries.append({**file_facts(source.path), "tool": source.tool,
                        "tool_version": source.tool_version, "task": source.task,
                        "states": sorted({state for state, _c in mine}),
                        "calls": len(mine),
                        "questions": len({c.question_id for _s, c in mine}),
                        "errored": sum(1 for _s, c in mine if c.error is not None
                                       or c.answer is None),
                        **dict(source.extra)})
    return {"format": "snapaudit-import/1", "sources": entries, "errored_calls": errored,
            "excluded_questions": dropped}


def write_import(out: str | Path, imported: Imported, fmt: str = "jsonl") -> dict[str, Path]:
    """Write ``answers.jsonl``, ``gold.jsonl`` (when the logs have targets; ``.parquet`` for
    ``fmt="parquet"``) and ``provenance.json`` under ``out``; returns their paths by name."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"answers": folder / f"answers.{fmt}", "provenance": folder / "provenance.json"}
    write_answers(paths["answers"], imported.rows)
    if imported.gold:
        paths["gold"] = folder / f"gold.{fmt}"
        write_gold(paths["gold"], imported.gold)
    paths["provenance"].write_text(json.dumps(imported.provenance, indent=2, sort_keys=True,
                                              ensure_ascii=False) + "\n", encoding="utf-8")
    return paths
