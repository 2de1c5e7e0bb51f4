"""lm-evaluation-harness samples JSONL (``--log_samples``; a task with ``repeats: N``).

Mapping: each line is one document of one filter; the question id is ``doc_id``; the N
repeats are ``resps[0][k]`` (repeat k+1) inside that one line; the target is ``target``.
A task logs one line per filter, so lines are de-duplicated on ``doc_id`` (the first filter
seen is kept, the others counted). The state is named from the run's ``config.model_args``
(a ``key=value,...`` string or a dict) in the ``results_*.json`` beside the samples file
(:mod:`snapaudit.tables.foreign.naming`: the model name, then what differs), or from the file
name when that is missing. lm-eval writes a null output as ``""`` (its
``LMEVAL_MODEL_NONE_ANSWER_PLACEHOLDER``); an empty or blank output is an errored call.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from snapaudit.errors import InputError
from snapaudit.tables.answers import _json_objects
from snapaudit.tables.foreign.common import Call, ReadOptions, Source
from snapaudit.tables.foreign.naming import Hint, args_label, parse_args

TOOL = "lm-eval"
_SAMPLES = re.compile(r"^(?:.*_)?samples_(?P<task>.+?)_(?P<stamp>\d{4}-\d\d-\d\dT[\d.-]+)\.jsonl$")


def read_lmeval(path: str, options: ReadOptions | None = None) -> Source:
    results = _results_beside(Path(path))
    config = results.get("config") or {}
    hint = _hint(config, Path(path).stem)
    match = _SAMPLES.match(Path(path).name)
    task = match.group("task") if match else None
    calls: list[Call] = []
    seen: set[Any] = set()
    skipped = 0
    for line, obj in _json_objects(path):
        where: dict[str, Any] = {"path": path, "line": line}
        doc_id = obj.get("doc_id")
        resps = obj.get("resps")
        if doc_id is None or not isinstance(resps, list):
            raise InputError("not an lm-eval samples line (no doc_id or resps)", **where)
        if doc_id in seen:
            skipped += 1
            continue
        seen.add(doc_id)
        if not resps or not isinstance(resps[0], list):
            raise InputError("resps[0] is not a list of repeats", **where)
        target = obj.get("target")
        for k, resp in enumerate(resps[0]):
            calls.append(Call(
                question_id=str(doc_id), repeat=k + 1,
                answer=resp if isinstance(resp, str) or resp is None else json.dumps(resp),
                state_hint=hint.label, record=f"line {line} (doc_id {doc_id}, resps[0][{k}])",
                target=None if target is None else _targets(target),
                question=_prompt(obj)))
    return Source(path=path, tool=TOOL, tool_version=results.get("lm_eval_version"),
                  task=task, calls=tuple(calls),
                  extra={"duplicate_filter_lines": skipped, "model_args": hint.label},
                  hints={hint.label: hint} if hint.args is not None else {})


def _hint(config: dict[str, Any], stem: str) -> Hint:
    """The state hint of a run: its ``model_args`` (as arguments), else its model, else the
    file name."""
    args = config.get("model_args")
    fallback = str(config.get("model") or stem)
    if not args:
        return Hint(fallback)
    parsed = parse_args(args)
    return Hint(args_label(parsed), parsed, fallback)


def _results_beside(samples: Path) -> dict[str, Any]:
    """The results JSON of the same run: same timestamp, else the only one in the folder."""
    match = _SAMPLES.match(samples.name)
    candidates = sorted(samples.parent.glob("*results*.json"))
    if match:
        same = [c for c in candidates if match.group("stamp") in c.name]
        candidates = same or candidates
    if len(candidates) != 1:
        return {}
    try:
        value = json.loads(candidates[0].read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def _prompt(obj: dict[str, Any]) -> str | None:
    """The first request's prompt; with a chat template (``arg_0`` a list holding the chat
    as JSON), the last user message."""
    args = obj.get("arguments")
    if not isinstance(args, dict) or not args:
        return None
    first = next(iter(args.values()))
    prompt = first.get("arg_0") if isinstance(first, dict) else None
    if isinstance(prompt, list) and prompt and isinstance(prompt[0], str):
        return _last_user(prompt[0])
    return prompt if isinstance(prompt, str) else None


def _last_user(chat: str) -> str:
    try:
        messages = json.loads(chat)
    except ValueError:
        return chat
    users = [m.get("content") for m in messages if isinstance(m, dict)
             and m.get("role") == "user"] if isinstance(messages, list) else []
    return users[-1] if users and isinstance(users[-1], str) else chat


def _targets(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else (str(value),)
