"""promptfoo output JSON (``promptfoo eval -o out.json``, with ``--repeat N``).

Mapping: each ``results.results[]`` entry is one call; the state is its provider's label (or
id); the question id is ``vars[id_var]`` (default ``id``) or, without it, a hash of the vars
and prompt; the repeat is the 1-based position of the entry within its (vars, prompt,
provider) group in ``testIdx`` order; the answer is ``response.output``; doc ids come from
``response.metadata[doc_ids_key]``; the target from ``vars[target_var]``. An entry with
``error`` set or ``failureReason`` 2 (ERROR) is an errored call; a failed assertion is not.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from snapaudit.errors import InputError
from snapaudit.tables.foreign.common import Call, ReadOptions, Source

TOOL = "promptfoo"
_ERROR_REASON = 2


def read_promptfoo(path: str, options: ReadOptions | None = None) -> Source:
    opts = options or ReadOptions()
    id_var, target_var, doc_ids_key = opts.id_var, opts.target_var, opts.doc_ids_key
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
        results = doc["results"]["results"]
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not a promptfoo output JSON: {exc}", path=path) from None
    except (KeyError, TypeError):
        raise InputError("not a promptfoo output JSON (no results.results list); write "
                         "it with `promptfoo eval -o FILE.json`", path=path) from None
    if not isinstance(results, list):
        raise InputError("results.results is not a list", path=path)
    entries = sorted(enumerate(results), key=lambda e: (_int(e[1].get("testIdx")), e[0]))
    counts: dict[tuple[str, str, str], int] = {}
    calls = []
    for index, entry in entries:
        record = f"results.results[{index}]"
        if not isinstance(entry, dict):
            raise InputError(f"{record} is not an object", path=path)
        variables = entry.get("vars") or entry.get("testCase", {}).get("vars") or {}
        prompt = entry.get("prompt", {})
        prompt_text = prompt.get("raw", "") if isinstance(prompt, dict) else str(prompt)
        provider = entry.get("provider") or {}
        label = (provider.get("label") or provider.get("id") if isinstance(provider, dict)
                 else str(provider)) or "provider"
        qid = variables.get(id_var)
        if qid is None:
            blob = json.dumps([variables, prompt_text], sort_keys=True, ensure_ascii=False)
            qid = hashlib.sha256(blob.encode()).hexdigest()[:16]
        group = (json.dumps(variables, sort_keys=True), prompt_text, label)
        counts[group] = counts.get(group, 0) + 1
        response = entry.get("response") or {}
        error = entry.get("error") or (response.get("error") if isinstance(response, dict)
                                       else None)
        if error is None and entry.get("failureReason") == _ERROR_REASON:
            error = "failureReason ERROR"
        output = response.get("output") if isinstance(response, dict) else None
        meta = response.get("metadata") or {} if isinstance(response, dict) else {}
        docs = meta.get(doc_ids_key) if isinstance(meta, dict) else None
        target = variables.get(target_var)
        calls.append(Call(
            question_id=str(qid), repeat=counts[group],
            answer=None if error is not None else _text(output), state_hint=str(label),
            record=record,
            target=None if target is None else _targets(target),
            doc_ids=tuple(str(d) for d in docs) if isinstance(docs, list) else None,
            question=prompt_text or None, error=None if error is None else str(error)))
    version = (doc.get("metadata") or {}).get("promptfooVersion")
    return Source(path=path, tool=TOOL, tool_version=version, task=None, calls=tuple(calls),
                  extra={"eval_id": doc.get("evalId")})


def _int(value: Any) -> int:
    return value if isinstance(value, int) else 0


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def _targets(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value) if isinstance(value, list) else (str(value),)
