"""lm-evaluation-harness samples JSONL (``--log_samples``; a task with ``repeats: N``).

Mapping: each line is one document of one filter; the question id is ``doc_id``; the N
repeats are ``resps[0][k]`` (repeat k+1) inside that one line; the target is ``target``.
A task logs one line per filter, so lines are de-duplicated on ``doc_id`` (the first filter
seen is kept, the others counted). The state is the run's ``config.model_args`` from the
``results_*.json`` beside the samples file (or the file name when that is missing).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from snapaudit.errors import InputError
from snapaudit.tables.answers import _json_objects
from snapaudit.tables.foreign.common import Call, Source

TOOL = "lm-eval"
_SAMPLES = re.compile(r"^(?:.*_)?samples_(?P<task>.+?)_(?P<stamp>\d{4}-\d\d-\d\dT[\d.-]+)\.jsonl$")


def read_lmeval(path: str) -> Source:
    results = _results_beside(Path(path))
    config = results.get("config") or {}
    hint = str(config.get("model_args") or config.get("model") or Path(path).stem)
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
                answer=resp if isinstance(resp, str) else json.dumps(resp),
                state_hint=hint, record=f"line {line} (doc_id {doc_id}, resps[0][{k}])",
                target=None if target is None else _targets(target),
                question=_prompt(obj)))
    return Source(path=path, tool=TOOL, tool_version=results.get("lm_eval_version"),
                  task=task, calls=tuple(calls),
                  extra={"duplicate_filter_lines": skipped, "model_args": hint})


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
    args = obj.get("arguments")
    if isinstance(args, dict) and args:
        first = next(iter(args.values()))
        if isinstance(first, dict) and isinstance(first.get("arg_0"), str):
            return str(first["arg_0"])
    return None


def _targets(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else (str(value),)
