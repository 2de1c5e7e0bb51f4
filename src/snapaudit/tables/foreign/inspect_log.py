"""inspect_ai eval logs (``inspect eval ... --epochs N``), read with inspect_ai's own reader.

The log file format is not a frozen spec, so this reads it only through
``inspect_ai.log.read_eval_log`` (header) and ``read_eval_log_samples`` (streaming); the
import-tool registry imports this module only for ``inspect`` and names the ``inspect`` extra
when inspect_ai is missing (``pip install 'snapaudit[inspect]'``).

Mapping: the question id is the sample ``id``; the repeat is ``epoch``; the answer is
``output.completion``; the target is ``target``; doc ids are ``metadata[doc_ids_key]`` or
``store[doc_ids_key]``; a sample with ``error`` set is an errored call. The state is
``eval.model`` (``state_from="model"``) or ``eval.task_version`` (``"task-version"``).
"""

from __future__ import annotations

from typing import Any

from inspect_ai.log import read_eval_log, read_eval_log_samples

from snapaudit.tables.foreign.common import Call, ReadOptions, Source

TOOL = "inspect_ai"
STATE_FROM = ("model", "task-version")


def read_inspect(path: str, options: ReadOptions | None = None) -> Source:
    opts = options or ReadOptions()
    state_from, doc_ids_key = opts.state_from, opts.doc_ids_key
    header = read_eval_log(path, header_only=True)
    spec = header.eval
    hint = str(spec.model if state_from == "model" else f"v{spec.task_version}")
    calls = []
    for sample in read_eval_log_samples(path, all_samples_required=False):
        docs = _doc_ids(sample, doc_ids_key)
        target = sample.target
        error = sample.error.message if sample.error is not None else None
        calls.append(Call(
            question_id=str(sample.id), repeat=int(sample.epoch),
            answer=None if error is not None else sample.output.completion,
            state_hint=hint, record=f"sample {sample.id!r} epoch {sample.epoch}",
            target=tuple(target) if isinstance(target, list) else (str(target),),
            doc_ids=docs, question=sample.input if isinstance(sample.input, str) else None,
            error=error))
    return Source(path=path, tool=TOOL, tool_version=str(header.eval.packages.get(
        "inspect_ai", "")) or None, task=str(spec.task), calls=tuple(calls),
        extra={"model": str(spec.model), "task_version": spec.task_version,
               "status": str(header.status)})


def _doc_ids(sample: Any, key: str) -> tuple[str, ...] | None:
    for place in (sample.metadata, sample.store):
        value = (place or {}).get(key)
        if isinstance(value, list):
            return tuple(str(v) for v in value)
    return None
