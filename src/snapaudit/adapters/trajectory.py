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

:func:`model_order` puts the steps in the order the model asked for the tools (tools run in
parallel finish, and report, in any order). :func:`agent_result` is the target's reply: the
answer, the documents read over all steps (each id once, in the order first read; their
texts when every one has a text) and the steps.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from snapaudit.adapters.common import answer_text, doc_ids, doc_text
from snapaudit.tables.steps import step_input


def make_step(tool: str, args: Any, items: Sequence[Any] | None, output: str | None,
              id_key: str | None) -> dict[str, Any]:
    """One step: ``tool`` called with ``args``, returning the documents ``items`` and the
    text ``output`` (None: not kept)."""
    step: dict[str, Any] = {"tool": tool, "input": step_input(args),
                            "doc_ids": doc_ids(items or (), id_key)}
    if output is not None:
        step["output"] = output
    return step


def model_order(call_ids: Sequence[str | None], asked: Sequence[str]) -> list[int] | None:
    """The indexes of the tool runs ``call_ids`` (their tool-call ids, in the order the runs
    started or reported) sorted by the order of ``asked`` (every tool-call id of the model's
    turns, in order); None when a run's id is missing there. An id the model used again in a
    later turn (some servers number each turn's calls from 0) is matched occurrence by
    occurrence: the k-th run with an id is the k-th call with it (a turn's tools all run
    before the next turn)."""
    slots: dict[str, list[int]] = {}
    for position, asked_id in enumerate(asked):
        slots.setdefault(asked_id, []).append(position)
    used: Counter[str] = Counter()
    keys: list[int] = []
    for run_id in call_ids:
        if run_id is None or used[run_id] >= len(slots.get(run_id, ())):
            return None
        keys.append(slots[run_id][used[run_id]])
        used[run_id] += 1
    return sorted(range(len(keys)), key=keys.__getitem__)


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
