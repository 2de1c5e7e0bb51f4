"""A loopback OpenAI-compatible judge: follows a planted partition, injects faults on cue."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from aiohttp import web

FAULTS = ("missing", "duplicate", "nonbool", "extra", "invalid_json", "extra_key")


def _parse_user(text: str) -> tuple[dict[str, str], list[tuple[str, str]]]:
    answers_part = text.split("Answers:\n", 1)[1].split("\n\nPairs to decide:\n", 1)
    answers = {}
    for line in answers_part[0].splitlines():
        label, _, answer = line.partition(": ")
        answers[label] = answer
    pairs = [(p.split("-")[0], p.split("-")[1]) for p in answers_part[1].split()]
    return answers, pairs


class FakeJudgeServer:
    """``same`` iff ``cluster(answer)`` agrees; ``faults`` are served first, one per call."""

    def __init__(self, cluster: Callable[[str], str], faults: list[str] | None = None):
        self.cluster = cluster
        self.faults = list(faults or [])
        self.requests: list[dict[str, Any]] = []
        self._runner: web.AppRunner | None = None
        self.url = ""

    def verdict(self, user: str, fault: str | None) -> str:
        answers, pairs = _parse_user(user)
        items: list[dict[str, Any]] = [
            {"a": a, "b": b, "same": self.cluster(answers[a]) == self.cluster(answers[b])}
            for a, b in pairs
        ]
        if fault == "invalid_json":
            return '{"pairs": [' + json.dumps(items[0])
        if fault == "missing":
            items = items[1:]
        elif fault == "duplicate":
            items = [*items, items[0]]
        elif fault == "nonbool":
            items[0] = {**items[0], "same": "yes"}
        elif fault == "extra":
            items.append({"a": "A", "b": "Z", "same": True})
        body: dict[str, Any] = {"pairs": items}
        if fault == "extra_key":
            body["reasoning"] = "because"
        return "```json\n" + json.dumps(body) + "\n```" if fault == "fence" else json.dumps(body)

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.requests.append(body)
        user = next(m["content"] for m in body["messages"] if m["role"] == "user")
        fault = self.faults.pop(0) if self.faults else None
        text = self.verdict(user, fault)
        return web.json_response({
            "model": body["model"],
            "choices": [{"message": {"role": "assistant", "content": text},
                         "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 10, "completion_tokens": 10},
        })

    async def __aenter__(self) -> FakeJudgeServer:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._handle)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{port}/v1"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        await self._runner.cleanup()


def first_word(answer: str) -> str:
    """The planted partition used by the tests: answers agree iff their first word does."""
    return re.split(r"\W+", answer.strip().lower())[0]
