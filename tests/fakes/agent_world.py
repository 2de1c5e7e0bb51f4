"""A planted agent world: six questions (q000..q005), states old and new, two repeats, each
question planting one way an agent's trajectory moves.

- q000: stable (one search, the same query, documents and answer everywhere);
- q001: index side: the same query in both states, other documents and answer in new;
- q002: query side: new reformulates the query ("item two"), other documents and answer;
- q003: query noise within a state: repeat 2 asks "item three" in both states, same
  documents and answer;
- q004: tool-path noise: repeat 2 adds a ``read`` step returning one more document;
- q005: a two-step agent whose second query comes from the first search's document
  (old: d5a, new: d5c); old repeat 2 writes the first query as "Item 5!" (the same after
  normalization); other answer in new.

The expected numbers, by hand (docs/agents.md walks through them):

========== ========= ========= =========
kernel     within %  cross %   D pp
========== ========= ========= =========
exact      100       50        50
tools      500/6     550/6     -50/6
queries    400/6     50        100/6
documents  550/6     275/6     275/6
========== ========= ========= =========

changed pairs 12 (same queries 4: q001; different queries 8: q002, q005); first divergence:
cross 24 pairs, 12 identical, 6 at step 1, 6 at step 2; within 12 pairs, 8 identical, 2 at
step 1, 2 at step 2.

The same replies come from the Python target :func:`agent`, the loopback service
:class:`AgentService` (steps under ``trace.calls`` with fields ``name``, ``args.q``,
``hits``) and the answers table :func:`agent_rows`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from snapaudit.systems.python import PythonCall
from snapaudit.tables import AnswerRow
from snapaudit.tables.records import Step
from tests.fakes.loopback import LoopbackServer

QUESTIONS = tuple(f"q00{i}" for i in range(6))
STATES = ("old", "new")

EXPECTED = {  # kernel: (within %, cross %, D pp)
    "exact": (100.0, 50.0, 50.0),
    "tools": (500 / 6, 550 / 6, -50 / 6),
    "queries": (400 / 6, 50.0, 100 / 6),
    "documents": (550 / 6, 275 / 6, 275 / 6),
}
CHANGED = {"total": 12, "same_queries": 4, "different_queries": 8}
DIVERGENCE = {"cross": {"pairs": 24, "identical": 12, "at_step": {"1": 6, "2": 6}},
              "within": {"pairs": 12, "identical": 8, "at_step": {"1": 2, "2": 2}}}


def _search(query: str, *docs: str) -> Step:
    return Step("search", query, tuple(docs), output=f"{len(docs)} hits")


def reply(qid: str, state: str, repeat: int) -> tuple[str, tuple[Step, ...]]:
    """The planted answer and trajectory of one cell."""
    new = state == "new"
    i = qid[-1]
    if qid == "q000":
        return "a0", (_search("item 0", "d0"),)
    if qid == "q001":
        return ("b1" if new else "a1"), (_search("item 1", "d1n" if new else "d1"),)
    if qid == "q002":
        return ("b2" if new else "a2"), (_search("item two" if new else "item 2",
                                                  "d2x" if new else "d2"),)
    if qid == "q003":
        return "a3", (_search("item three" if repeat == 2 else "item 3", "d3"),)
    if qid == "q004":
        steps = (_search("item 4", "d4"),)
        if repeat == 2:
            steps += (Step("read", "d4", ("d4b",)),)
        return "a4", steps
    first = "d5c" if new else "d5a"  # q005: the second query follows the first search's hit
    query = "Item 5!" if (not new and repeat == 2) else "item 5"
    return (f"{'b' if new else 'a'}{i}",
            (_search(query, first), _search(f"{first} details", "d5d" if new else "d5b")))


def _step_json(s: Step) -> dict[str, Any]:
    out: dict[str, Any] = {"tool": s.tool, "input": s.input, "doc_ids": list(s.doc_ids)}
    if s.output is not None:
        out["output"] = s.output
    return out


def agent(call: PythonCall) -> dict[str, Any]:
    """The Python target: the planted reply with its steps."""
    answer, steps = reply(call.question_id, call.state, call.repeat)
    return {"answer": answer, "steps": [_step_json(s) for s in steps]}


def agent_with_texts(call: PythonCall) -> dict[str, Any]:
    """The Python target with its last step's documents and their texts (a text that
    differs between the states under the same id)."""
    out = agent(call)
    ids = out["steps"][-1]["doc_ids"]
    return {**out, "doc_ids": ids, "doc_texts": [f"{d} in {call.state}" for d in ids]}


def agent_rows() -> list[AnswerRow]:
    """The planted world as an answers table."""
    rows = []
    for q in QUESTIONS:
        for s in STATES:
            for r in (1, 2):
                answer, steps = reply(q, s, r)
                rows.append(AnswerRow(q, s, r, answer, steps=steps))
    return rows


@dataclass
class AgentService(LoopbackServer):
    """The planted world over HTTP: ``POST /<state>`` with ``{question_id, repeat}``; the
    steps in the service's own shape (``trace.calls[*]``: ``name``, ``args.q``, ``hits``, and
    an ``output`` object the protocol leaves unread).
    The first reply for each question of ``broken`` names no tool in its first step."""

    broken: frozenset[str] = frozenset()

    def __post_init__(self) -> None:
        super().__init__()
        self.hits: dict[str, int] = {}

    def url(self, state: str) -> str:
        return f"http://127.0.0.1:{self.port}/{state}"

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        answer, steps = reply(body["question_id"], request.match_info["state"],
                              int(body["repeat"]))
        calls = [{"name": s.tool, "args": {"q": s.input}, "hits": list(s.doc_ids),
                  "output": {"scores": [1.0] * len(s.doc_ids)}} for s in steps]
        qid = body["question_id"]
        self.hits[qid] = self.hits.get(qid, 0) + 1
        if qid in self.broken and self.hits[qid] == 1:
            del calls[0]["name"]
        return web.Response(text=json.dumps({"answer": answer, "trace": {"calls": calls}}),
                            content_type="application/json")

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/{state}", self._handle)


def sampled_agent(call: PythonCall, delay_s: float = 0.0) -> dict[str, Any]:
    """A sampling agent: after ``delay_s`` seconds, a trajectory that is a function of
    (question, seed) alone (its query wording, a second search or not, the documents), so a
    run killed anywhere and resumed must end with the uninterrupted run's cells."""
    import time

    time.sleep(float(delay_s))
    draw = call.seed % 6
    steps = [{"tool": "search", "input": f"item {call.question_id} v{draw % 3}",
              "doc_ids": [f"d{call.question_id}", f"x{draw}"]}]
    if draw % 2:
        steps.append({"tool": "read", "input": f"x{draw}", "doc_ids": []})
    return {"answer": f"answer {draw % 4}", "steps": steps}
