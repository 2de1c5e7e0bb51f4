"""A loopback OpenAI-compatible chat server that plays a search agent with scripted tool calls.

    with ToolLLMServer() as server:
        ChatOpenAI(base_url=server.base_url, api_key="dummy", model="fake")
        OpenAILike(api_base=server.base_url, api_key="dummy", model="fake",
                   is_chat_model=True, is_function_calling_model=True)

``POST /v1/chat/completions`` (plain JSON, or server-sent events when ``stream`` is true)
answers by the conversation so far, deterministically from the messages and the request's
``seed`` (0 when absent), so a repeat with the same seed gets the same reply:

1. no tool result after the last user message and a ``search`` tool offered: a tool call
   ``search({"query": first_query(question, seed)})``, or one per part of a question with
   " and also " (parallel tool calls, in the order of the parts);
2. tool results: the answer, :func:`answer_of` each tool result (its first line up to the
   first comma or period) joined by "; ", so another index returns another answer.

A request offering no tools whose system prompt is LlamaIndex's ReAct format (a tool named
``search``) gets the same two turns as ReAct text: ``Action: search`` with ``Action Input:
{"input": query}``, then ``Answer:`` from the last ``Observation:``.

Every request body is kept in ``calls`` (the tests read the seeds the clients sent);
``latency_s`` delays each reply.
"""

from __future__ import annotations

import asyncio
import json
import re
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.loopback import LoopbackServer

_ID = re.compile(r"^\[[^\]]*\]\s*")
SHORT = {"what", "which", "who", "is", "the", "of", "a", "an", "in", "by", "was", "did", "does"}


def first_query(question: str, seed: int) -> str:
    """The question, or for a seed divisible by 4 its keywords alone (query noise)."""
    if seed % 4:
        return question
    words = re.findall(r"[A-Za-z0-9']+", question)
    return " ".join(w for w in words if w.lower() not in SHORT)


def answer_of(tool_text: str) -> str:
    """The first nonblank line of a tool result (its ``[id]`` prefix removed) up to its first
    comma or period ("no answer" when there is none)."""
    lines = [line.strip() for line in tool_text.splitlines() if line.strip()]
    if not lines:
        return "no answer"
    return re.split(r"[,.]", _ID.sub("", lines[0]), maxsplit=1)[0].strip() or "no answer"


def _text(content: Any) -> str:
    if isinstance(content, list):  # content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def reply(body: dict[str, Any]) -> dict[str, Any]:
    """The assistant message answering ``body`` (see the module doc)."""
    messages = body["messages"]
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    question = _text(messages[last_user]["content"])
    asked = [c["id"] for m in messages[last_user:] for c in m.get("tool_calls") or ()]
    tool = [m for m in messages[last_user:] if m["role"] == "tool"]  # in the model's order:
    tool.sort(key=lambda m: asked.index(m["tool_call_id"]) if m.get("tool_call_id") in asked
              else len(asked))  # an agent may append them as they finish
    results = [_text(m["content"]) for m in tool]
    tools = {t["function"]["name"] for t in body.get("tools") or []}
    if not tools and "Tool Name: search" in _text(messages[0]["content"]):
        return {"role": "assistant", "content": _react(messages, body)}
    if not results and "search" in tools:
        seed = int(body.get("seed") or 0)
        return {"role": "assistant", "content": None, "tool_calls": [
            {"id": f"call_{seed}_{i}", "type": "function",
             "function": {"name": "search",
                          "arguments": json.dumps({"query": first_query(part, seed)})}}
            for i, part in enumerate(question.split(" and also "))]}
    answer = "; ".join(answer_of(r) for r in results) if results else "no tool"
    return {"role": "assistant", "content": answer}


def _react(messages: list[dict[str, Any]], body: dict[str, Any]) -> str:
    """A ReAct turn in text (no ``tools`` offered, the ReAct format in the system prompt)."""
    observations = [_text(m["content"]) for m in messages
                    if _text(m["content"]).startswith("Observation:")]
    if observations:
        answer = answer_of(observations[-1].removeprefix("Observation:"))
        return f"Thought: I can answer without using any more tools.\nAnswer: {answer}"
    question = _text(next(m for m in messages if m["role"] == "user")["content"])
    query = json.dumps({"input": first_query(question, int(body.get("seed") or 0))})
    return f"Thought: I need to use a tool.\nAction: search\nAction Input: {query}"


@dataclass
class ToolLLMServer(LoopbackServer):
    latency_s: float = 0.0  # each reply waits this long (a slower endpoint)
    calls: list[dict[str, Any]] = field(default_factory=list)

    def __post_init__(self) -> None:
        LoopbackServer.__init__(self)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/chat/completions", self._chat)

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body: dict[str, Any] = await request.json()
        self.calls.append(body)
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        message = reply(body)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        base = {"id": "chatcmpl-fake", "created": 0, "model": body.get("model", "fake")}
        usage = {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13}
        if not body.get("stream"):
            return web.json_response({**base, "object": "chat.completion", "usage": usage,
                                      "choices": [{"index": 0, "message": message,
                                                   "finish_reason": finish}]})
        return await self._stream(request, base, message, finish)

    async def _stream(self, request: web.Request, base: dict[str, Any],
                      message: dict[str, Any], finish: str) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        deltas: list[tuple[dict[str, Any], str | None]] = [
            ({"role": "assistant", "content": message["content"]}, None)]
        deltas += [({"tool_calls": [{**c, "index": i}]}, None)  # one chunk per call, as OpenAI
                   for i, c in enumerate(message.get("tool_calls") or ())]
        for chunk_delta, reason in [*deltas, ({}, finish)]:
            chunk = {**base, "object": "chat.completion.chunk",
                     "choices": [{"index": 0, "delta": chunk_delta, "finish_reason": reason}]}
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response
