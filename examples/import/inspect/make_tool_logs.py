"""Write real inspect_ai logs of a tool-using agent (`--epochs 2`, no network): the planted
trajectories of docs/import.md ("Steps from tool calls"), for `snapaudit import inspect`.

    python examples/import/inspect/make_tool_logs.py OUT_DIR [eval|json]

writes OUT_DIR/old/*.eval and OUT_DIR/new/*.eval (or .json). Both states run inspect_ai's own
`mockllm/model` with a `custom_outputs` function that plays a scripted agent: it calls the
`search(query)` tool (whose result is a JSON list of hits `{"id", "title"}` from the state's
index) and, in some epochs, `read(doc_id, section)` (plain text), then answers. The epoch
reaches the model as a system message written by the `epoch_note` solver.

| question | plant | old (epoch 1 / 2) | new (epoch 1 / 2) |
|---|---|---|---|
| q1 | stable | search "capital of France" -> d1; Paris | the same |
| q2 | index side | search "tallest mountain" -> d2; Everest | the same query -> d3; K2 |
| q3 | query side | search "longest river" -> d4; Nile | search "river length" -> d5; Amazon |
| q4 | tool-path noise | search "speed of light" -> d6 (epoch 2 reads d6 too); 299792 km/s | same |
"""

from __future__ import annotations

import json
import sys

from inspect_ai import Task, eval
from inspect_ai.dataset import Sample
from inspect_ai.model import (
    ChatMessageSystem,
    ChatMessageTool,
    ModelOutput,
    ModelUsage,
    get_model,
)
from inspect_ai.scorer import match
from inspect_ai.solver import Generate, TaskState, generate, solver, use_tools
from inspect_ai.tool import Tool, tool

QUESTIONS = [("q1", "What is the capital of France?", "Paris"),
             ("q2", "What is the tallest mountain?", "Everest"),
             ("q3", "What is the longest river?", "Nile"),
             ("q4", "What is the speed of light?", "299792 km/s")]
INDEX = {"old": {"capital of France": ["d1"], "tallest mountain": ["d2"],
                 "longest river": ["d4"], "speed of light": ["d6"]},
         "new": {"capital of France": ["d1"], "tallest mountain": ["d3"],
                 "river length": ["d5"], "speed of light": ["d6"]}}
ANSWERS = {"old": {"q1": "Paris", "q2": "Everest", "q3": "Nile", "q4": "299792 km/s"},
           "new": {"q1": "Paris", "q2": "K2", "q3": "Amazon", "q4": "299792 km/s"}}
QUERIES = {"old": {"q1": "capital of France", "q2": "tallest mountain", "q3": "longest river",
                   "q4": "speed of light"},
           "new": {"q1": "capital of France", "q2": "tallest mountain", "q3": "river length",
                   "q4": "speed of light"}}


def plan(state: str, qid: str, epoch: int) -> list[tuple[str, dict[str, object]]]:
    """The tool calls of ``state``'s agent for ``qid`` in ``epoch``, in order."""
    calls: list[tuple[str, dict[str, object]]] = [("search", {"query": QUERIES[state][qid]})]
    if qid == "q4" and epoch == 2:
        calls.append(("read", {"doc_id": "d6", "section": 2}))
    return calls


@tool
def search(state: str) -> Tool:
    async def execute(query: str) -> str:
        """Search the index.

        Args:
            query: the search query
        """
        return json.dumps([{"id": d, "title": f"document {d}"}
                           for d in INDEX[state].get(query, [])])
    return execute


@tool
def read() -> Tool:
    async def execute(doc_id: str, section: int) -> str:
        """Read one section of a document.

        Args:
            doc_id: the document id
            section: the section number
        """
        return f"section {section} of {doc_id}: light travels 299792 km each second"
    return execute


@solver
def epoch_note():  # type: ignore[no-untyped-def]
    async def solve(state: TaskState, generate: Generate) -> TaskState:
        state.messages.insert(0, ChatMessageSystem(content=f"epoch {state.epoch}"))
        return state
    return solve


def agent(state: str):  # type: ignore[no-untyped-def]
    """The scripted agent of ``state`` as a mockllm ``custom_outputs`` function."""
    def output(messages, tools, tool_choice, config):  # type: ignore[no-untyped-def]
        epoch = int(messages[0].text.split()[1])
        question = next(m.text for m in messages if m.role == "user")
        qid = next(q for q, text, _gold in QUESTIONS if text == question)
        done = sum(isinstance(m, ChatMessageTool) for m in messages)
        calls = plan(state, qid, epoch)
        if done < len(calls):
            name, args = calls[done]
            reply = ModelOutput.for_tool_call("mockllm", name, args,
                                              tool_call_id=f"{qid}-{epoch}-{done + 1}")
        else:
            reply = ModelOutput.from_content("mockllm", ANSWERS[state][qid])
        # usage given, so mockllm counts no tokens (its tokenizer would be downloaded)
        reply.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)
        return reply
    return output


def task(state: str) -> Task:
    return Task(dataset=[Sample(id=q, input=text, target=gold) for q, text, gold in QUESTIONS],
                solver=[epoch_note(), use_tools(search(state), read()), generate()],
                scorer=match(), name="toolqa")


if __name__ == "__main__":
    out, fmt = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "eval")
    for name in ("old", "new"):
        model = get_model("mockllm/model", custom_outputs=agent(name))
        eval(task(name), model=model, epochs=2, log_dir=f"{out}/{name}", display="none",
             log_format=fmt)
