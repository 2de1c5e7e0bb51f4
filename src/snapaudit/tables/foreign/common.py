"""What every foreign-log reader yields, and the one place that turns it into answer tables.

A reader yields :class:`Call` records (one per sample and repeat) for one :class:`Source`;
:func:`assemble` names the states (:mod:`snapaudit.tables.foreign.naming`), checks repeats,
ids, tasks and errored calls, and builds the answer rows, the gold and the provenance;
:func:`write_import` writes them.

An errored call is what ``snapaudit analyze`` refuses as an answer: the tool logged an error,
or the output is empty or only white space (the answer tables' rule: a system that gave no
answer is a failed call, not an answer).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from snapaudit import atomic
from snapaudit.errors import InputError
from snapaudit.tables.answers import validate_answers, write_answers
from snapaudit.tables.foreign.naming import Hint, name_hints
from snapaudit.tables.gold import write_gold
from snapaudit.tables.records import AnswerRow, Step

ERROR_CHARS = 240  # an error is shown as one line of at most this many characters


@dataclass(frozen=True, slots=True)
class ReadOptions:
    """The options of ``snapaudit import`` that the readers take (each reads its own)."""

    state_from: str = "model"  # inspect: "model" or "task-version"
    doc_ids_key: str = "retrieved_context_ids"  # inspect metadata/store, promptfoo metadata
    id_var: str = "id"  # promptfoo: the var of the question id
    target_var: str = "target"  # promptfoo: the var of the gold answer


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
    steps: tuple[Step, ...] | None = None  # the trajectory, where the log records one

    def problem(self) -> str | None:
        """Why this call is not an answer (one line), or None when it is one."""
        if self.error is not None:
            return one_line(self.error)
        if self.answer is None:
            return "no output"
        if not self.answer.strip():
            return "empty output" if not self.answer else "blank output (white space only)"
        return None


@dataclass(frozen=True, slots=True)
class Source:
    """One log file read by one reader. ``hints``: for a state label that stands for model
    arguments (lm-eval's ``model_args``), those arguments (:class:`Hint`)."""

    path: str
    tool: str
    tool_version: str | None
    task: str | None
    calls: tuple[Call, ...]
    extra: Mapping[str, Any] = field(default_factory=dict)
    hints: Mapping[str, Hint] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Imported:
    rows: tuple[AnswerRow, ...]
    gold: dict[str, tuple[str, ...]]
    provenance: dict[str, Any]
    states: dict[str, list[str]] = field(default_factory=dict)  # state -> the labels it is


def one_line(error: str) -> str:
    """One line of a logged error: its first line (a Python traceback: its last), without
    stack frames, with the ``message`` of a JSON error body that follows; shortened."""
    lines = [x.strip() for x in error.splitlines() if x.strip()]
    lines = [x for x in lines if not x.startswith(("at ", 'File "'))] or [error.strip()]
    head = lines[-1] if lines[0].startswith("Traceback") else lines[0]
    for rest in lines[1:]:
        message = _json_message(rest)
        if message and message not in head:
            head = f"{head.rstrip(':')}: {message}"
            break
    return head if len(head) <= ERROR_CHARS else head[:ERROR_CHARS - 1] + "…"


def _json_message(text: str) -> str | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    if isinstance(value, dict) and isinstance(value.get("error"), dict):
        value = value["error"]
    message = value.get("message") if isinstance(value, dict) else None
    return " ".join(str(message).split()) if message else None


def file_facts(path: str) -> dict[str, Any]:
    data = Path(path).read_bytes()
    return {"path": path, "size": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def assemble(sources: Sequence[Source], *, states: Mapping[str, str] | None = None,
             allow_errors: bool = False) -> Imported:
    """Answer rows, gold and provenance from ``sources``.

    ``states`` maps a source path, a label the log suggests (a model, a provider label, model
    args) or the derived state name to the state name; otherwise the derived name is the
    state (:mod:`snapaudit.tables.foreign.naming`). An errored call (:meth:`Call.problem`)
    is an error naming it unless ``allow_errors``: then its whole question is left out of
    every state, and listed in the provenance.
    """
    states = dict(states or {})
    tasks = {s.task for s in sources if s.task is not None}
    if len(tasks) > 1:
        raise InputError(f"the logs are of different tasks ({', '.join(sorted(tasks))}); "
                         "import one task at a time", path=sources[0].path)
    names = name_hints([s.hints.get(c.state_hint) or Hint(c.state_hint)
                        for s in sources for c in s.calls])
    where: dict[tuple[str, str, int], str] = {}
    calls: list[tuple[str, Call, Source]] = []
    errored: list[dict[str, Any]] = []
    labels: dict[str, list[str]] = {}
    for source in sources:
        for call in source.calls:
            named = names[call.state_hint]
            state = states.get(source.path) or states.get(call.state_hint) \
                or states.get(named) or named
            labels.setdefault(state, [])
            if call.state_hint not in labels[state]:
                labels[state].append(call.state_hint)
            key = (call.question_id, state, call.repeat)
            if key in where:
                raise InputError(f"question {call.question_id!r} repeat {call.repeat} of "
                                 f"state {state!r} ({call.record}) is also in {where[key]}; "
                                 "name the states with --state", path=source.path)
            where[key] = f"{source.path} ({call.record})"
            problem = call.problem()
            if problem is not None:
                errored.append({"path": source.path, "record": call.record,
                                "question_id": call.question_id, "state": state,
                                "repeat": call.repeat, "error": problem})
            calls.append((state, call, source))
    if errored and not allow_errors:
        _refuse(errored)
    dropped = {e["question_id"] for e in errored}
    # where any call has steps, a call without took no step (an empty trajectory)
    none: tuple[Step, ...] | None = () if any(c.steps is not None for _t, c, _s in calls) \
        else None
    rows = [AnswerRow(c.question_id, state, c.repeat, c.answer or "", c.doc_ids, c.question,
                      steps=none if c.steps is None else c.steps)
            for state, c, _s in calls if c.question_id not in dropped]
    _check_grid(rows, calls)
    validate_answers(rows, path=sources[0].path)
    gold = _gold(calls, dropped)
    provenance = _provenance(sources, calls, errored, sorted(dropped))
    return Imported(tuple(rows), gold, {**provenance, "state_labels": labels}, labels)


def _refuse(errored: Sequence[Mapping[str, Any]]) -> None:
    first, more = errored[0], len(errored) - 1
    others = f" (and {more} more errored call(s))" if more else ""
    raise InputError(f"question {first['question_id']!r} repeat {first['repeat']} of state "
                     f"{first['state']!r} errored: {first['error']} [{first['record']}]"
                     f"{others}; re-run it, or pass --allow-errors to leave its question out "
                     "of every state", path=first["path"])


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
                        "errored": sum(1 for _s, c in mine if c.problem() is not None),
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
    atomic.write_text(paths["provenance"], json.dumps(imported.provenance, indent=2,
                                                      sort_keys=True, ensure_ascii=False) + "\n")
    return paths
