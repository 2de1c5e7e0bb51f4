"""What the agent adapters share: one tool call as a step, and an agent's reply.

A step is ``{"tool", "input", "doc_ids", "output"?}`` (:mod:`snapaudit.tables.steps`):

* ``input``: the tool's arguments as one text: a single string argument as is (a search
  tool's ``query``), a string input as is, anything else as canonical JSON (sorted keys, no
  spaces; a value JSON cannot hold is written as its ``repr``), so equal arguments give equal
  inputs whatever order the model wrote them in;
* ``doc_ids``: the stable ids (:func:`snapaudit.adapters.common.doc_id`) of the documents the
  tool returned, in order; none for a tool that returned no documents;
* ``output``: the tool's output text (stored, never compared), dropped with
  ``outputs=False``.

:func:`agent_result` is the target's reply: the answer, the documents read over all steps
(each id once, in the order first read; their texts when every one has a text) and the steps.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from snapaudit.adapters.common import answer_text, doc_ids, doc_text


def step_input(args: Any) -> str:
    """The arguments of one tool call as the step's ``input`` (see the module doc)."""
    if isinstance(args, str):
        return args
    if isinstance(args, Mapping) and len(args) == 1:
        (value,) = args.values()
        if isinstance(value, str):
            return value
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      default=repr)


def make_step(tool: str, args: Any, items: Sequence[Any] | None, output: str | None,
              id_key: str | None) -> dict[str, Any]:
    """One step: ``tool`` called with ``args``, returning the documents ``items`` and the
    text ``output`` (None: not kept)."""
    step: dict[str, Any] = {"tool": tool, "input": step_input(args),
                            "doc_ids": doc_ids(items or (), id_key)}
    if output is not None:
        step["output"] = output
    return step


def agent_result(answer: Any, steps: Sequence[dict[str, Any]],
                 items: Iterable[Sequence[Any]]) -> dict[str, Any]:
    """The reply of an agent that took ``steps`` (``items``: each step's documents)."""
    ids: list[str] = []
    texts: list[str | None] = []
    for step, docs in zip(steps, items, strict=True):
        for doc_id, doc in zip(step["doc_ids"], docs, strict=True):
            if doc_id not in ids:
                ids.append(doc_id)
                texts.append(doc_text(doc))
    out: dict[str, Any] = {"answer": answer_text(answer), "doc_ids": ids, "steps": list(steps)}
    if all(isinstance(t, str) for t in texts):
        out["doc_texts"] = texts
    return out
