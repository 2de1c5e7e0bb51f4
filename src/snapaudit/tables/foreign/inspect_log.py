"""inspect_ai eval logs (``inspect eval ... --epochs N``), read with inspect_ai's own reader.

The log file format is not a frozen spec, so this reads it only through inspect_ai's public
readers: ``read_eval_log`` (the header; a .json log whole), ``read_eval_log_sample_summaries``
and ``read_eval_log_samples_by_id`` (an .eval log's samples, :data:`CHUNK` at a time, their
``attachment://`` references resolved: a long text may be stored once per sample; its
``read_eval_log_samples`` opens the zip file again for every sample, which takes time
quadratic in the samples). A file inspect_ai cannot read is an input error naming it. The
import-tool registry imports this module only for ``inspect`` and names the ``inspect`` extra
when inspect_ai is missing (``pip install 'snapaudit[inspect]'``).

Mapping: the question id is the sample ``id``; the repeat is ``epoch``; the answer is
``output.completion``; the target is ``target``; doc ids are ``metadata[doc_ids_key]`` or
``store[doc_ids_key]``; a sample with ``error`` set is an errored call. The state is
``eval.model`` (``state_from="model"``) or ``eval.task_version`` (``"task-version"``).

Steps (:mod:`snapaudit.tables.steps`) come from the sample's messages: each tool call of an
assistant message, in order, is one step: its function is the tool; its arguments the input
(a single string argument as is, else their canonical JSON, keys sorted); the tool message
answering it (``tool_call_id``) gives the output (its text, or its error) and the doc ids:
``metadata[doc_ids_key]`` of that message, else, when its text is JSON, the object's
``doc_ids_key`` or, for a list of hits, each hit's ``id``; else none. A sample without tool
calls has no steps (docs/import.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, Literal, TypeVar

from inspect_ai.log import (
    read_eval_log,
    read_eval_log_sample_summaries,
    read_eval_log_samples_by_id,
)

from snapaudit.errors import InputError
from snapaudit.tables.foreign.common import Call, ReadOptions, Source, one_line
from snapaudit.tables.records import Step
from snapaudit.tables.steps import StepsError, parse_steps, step_input

TOOL = "inspect_ai"
STATE_FROM = ("model", "task-version")
CHUNK = 512  # .eval samples per read (inspect_ai reads the zip directory once per read)
CORE: Literal["core"] = "core"  # "attachment://" references in messages resolved to their text
T = TypeVar("T")


def read_inspect(path: str, options: ReadOptions | None = None) -> Source:
    opts = options or ReadOptions()
    state_from, doc_ids_key = opts.state_from, opts.doc_ids_key
    header = _reading(path, lambda: read_eval_log(path, header_only=True))
    spec = header.eval
    hint = str(spec.model if state_from == "model" else f"v{spec.task_version}")
    calls = []
    for sample in _samples(path, spec):
        docs = _doc_ids(sample, doc_ids_key)
        target = sample.target
        error = sample.error.message if sample.error is not None else None
        record = f"sample {sample.id!r} epoch {sample.epoch}"
        calls.append(Call(
            question_id=str(sample.id), repeat=int(sample.epoch),
            answer=None if error is not None else sample.output.completion,
            state_hint=hint, record=record,
            target=tuple(target) if isinstance(target, list) else (str(target),),
            doc_ids=docs, question=sample.input if isinstance(sample.input, str) else None,
            error=error, steps=_steps(sample.messages, doc_ids_key, path, record)))
    return Source(path=path, tool=TOOL, tool_version=str(header.eval.packages.get(
        "inspect_ai", "")) or None, task=str(spec.task), calls=tuple(calls),
        extra={"model": str(spec.model), "task_version": spec.task_version,
               "status": str(header.status)})


def _reading(path: str, read: Callable[[], T]) -> T:
    """``read()``, a call of inspect_ai's reader; whatever it raises is an input error."""
    try:
        return read()
    except Exception as e:  # inspect_ai's own errors: not a log, a truncated zip, bad JSON
        raise InputError(f"inspect_ai cannot read this log: {type(e).__name__}: "
                         f"{one_line(str(e))}", path=path) from None


def _samples(path: str, spec: Any) -> Iterator[Any]:
    """The samples in the log, in the order of the dataset's ids and then epochs (a log of
    an unfinished run lacks some; they are not there)."""
    epochs = range(1, (spec.config.epochs or 1) + 1)
    if path.endswith(".json"):  # one JSON document: inspect_ai reads it whole anyway
        log = _reading(path, lambda: read_eval_log(path, resolve_attachments=CORE))
        found = {(str(s.id), s.epoch): s for s in log.samples or []}
        order = [(str(i), e) for i in spec.dataset.sample_ids or [] for e in epochs]
        yield from [found.pop(key) for key in order if key in found] + list(found.values())
        return
    present = _reading(path, lambda: read_eval_log_sample_summaries(path))
    ids = {(str(s.id), s.epoch): s.id for s in present}
    wanted = [(ids[str(i), e], e) for i in spec.dataset.sample_ids or [] for e in epochs
              if (str(i), e) in ids]
    seen = {(str(i), e) for i, e in wanted}
    wanted += [(s.id, s.epoch) for s in present if (str(s.id), s.epoch) not in seen]
    for start in range(0, len(wanted), CHUNK):
        yield from _reading(path, partial(read_eval_log_samples_by_id, path,
                                          wanted[start:start + CHUNK],
                                          resolve_attachments=CORE))


def _doc_ids(sample: Any, key: str) -> tuple[str, ...] | None:
    for place in (sample.metadata, sample.store):
        value = (place or {}).get(key)
        if isinstance(value, list):
            return tuple(str(v) for v in value)
    return None


def _steps(messages: Any, key: str, path: str, record: str) -> tuple[Step, ...] | None:
    """The steps of a sample's tool calls (None when it made none), checked and bounded as
    every trajectory is; a bad or over-long one is an error naming the sample."""
    results: dict[str, Any] = {}
    for message in messages:
        if message.role == "tool" and message.tool_call_id is not None:
            results.setdefault(message.tool_call_id, message)
    raw = [_step(call, results.get(call.id), key) for message in messages
           if message.role == "assistant" for call in message.tool_calls or ()]
    if not raw:
        return None
    try:
        return parse_steps(raw, ids_as_text=True)
    except StepsError as e:
        raise InputError(f"{record}: its tool calls as steps: {e}", path=path) from None


def _step(call: Any, result: Any, key: str) -> dict[str, Any]:
    step = {"tool": call.function, "input": step_input(call.arguments),
            "doc_ids": _result_ids(result, key)}
    if result is not None:
        error = result.error
        step["output"] = result.text or (f"{error.type}: {error.message}" if error else "")
    return step


def _result_ids(result: Any, key: str) -> Any:
    """The doc ids of a tool result: its ``metadata[key]``, else those its JSON text carries
    (an object's ``key``, or the ``id`` of every hit of a list of objects), else none."""
    if result is None:
        return []
    if result.metadata and key in result.metadata:
        return result.metadata[key]
    try:
        value = json.loads(result.text)
    except ValueError:
        return []
    if isinstance(value, dict):
        return value.get(key, [])
    if isinstance(value, list) and value and all(
            isinstance(hit, dict) and isinstance(hit.get("id"), str | int)
            and not isinstance(hit.get("id"), bool) for hit in value):
        return [hit["id"] for hit in value]
    return []
