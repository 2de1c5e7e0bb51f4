"""A loopback fake RAG service: planted answer distributions and fault injection.

``POST /{state}/answer`` with ``{"question", "question_id", "repeat"}`` answers
``{"answer", "doc_ids"}``. The answer is a deterministic function of
(question id, state, repeat), so a run that is killed and resumed sees the same served
answers as an uninterrupted one. Faults are injected on the first ``faults_per_key`` hits
of a chosen share of (question, state, repeat) keys, cycling through the fault kinds.
Runs its own event loop in a background thread so subprocess tests can use it too.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.loopback import LoopbackServer

FAULTS = ("500", "429", "timeout", "drop", "malformed", "empty", "oversized")


def _h(*parts: object) -> int:
    text = "|".join(str(p) for p in parts)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def planted_answer(question_id: str, state: str, repeat: int, old: str = "old") -> str:
    """Four planted kinds of question, by hash of the id:

    stable (same answer everywhere), noisy (repeat-dependent in every state),
    churned (the new states answer differently from ``old``), and UNKNOWN in ``old``.
    """
    kind = _h("kind", question_id) % 4
    if kind == 0:
        return f"answer {question_id}"
    if kind == 1:
        return f"answer {question_id} variant {_h('noise', question_id, state, repeat) % 2}"
    if kind == 2:
        return f"answer {question_id}" if state == old else f"other {question_id}"
    return "UNKNOWN" if state == old else f"answer {question_id}"


def revised(question_id: str) -> bool:
    """Whether the shared document of this question has a new text after the first state."""
    return _h("rev", question_id) % 3 == 0


@dataclass
class FakeRagService(LoopbackServer):
    states: tuple[str, ...] = ("old", "new")
    latency_s: float = 0.0
    fault_share: float = 0.0
    faults_per_key: int = 1
    fault_kinds: tuple[str, ...] = FAULTS
    retry_after: str = "0"
    hang_s: float = 1.0
    fixed_answer: str | None = None
    hits: Counter[str] = field(default_factory=Counter)
    faults_served: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        LoopbackServer.__init__(self)

    def url(self, state: str) -> str:
        return f"http://127.0.0.1:{self.port}/{state}/answer"

    def fault_for(self, key: str, hit: int) -> str | None:
        if self.fault_share <= 0 or hit > self.faults_per_key:
            return None
        if (_h("fault", key) % 10_000) / 10_000 >= self.fault_share:
            return None
        return self.fault_kinds[_h("kind", key, hit) % len(self.fault_kinds)]

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        state = request.match_info["state"]
        body: dict[str, Any] = await request.json()
        qid, repeat = str(body["question_id"]), int(body.get("repeat", 1))
        key = f"{qid}|{state}|{repeat}"
        self.hits[key] += 1
        fault = self.fault_for(key, self.hits[key])
        if self.latency_s:
            await asyncio.sleep(self.latency_s)
        if fault is not None:
            self.faults_served[fault] += 1
            return await self._fault(request, fault)
        answer = self.fixed_answer or planted_answer(qid, state, repeat, self.states[0])
        doc_ids = [f"d{_h('doc', qid, state) % 50}", f"d{_h('doc2', qid) % 50}"]
        # "texts": the second document, shared by every state, gets a new text in the later
        # states for the questions of revised(); a system reads them with doc_texts_path
        texts = [f"passage {d}" for d in doc_ids]
        if state != self.states[0] and revised(qid):
            texts[1] += " (revised)"
        return web.json_response({"answer": answer, "doc_ids": doc_ids, "texts": texts})

    async def _fault(self, request: web.Request, fault: str) -> web.StreamResponse:
        if fault == "500":
            return web.Response(status=500, text="boom")
        if fault == "429":
            return web.Response(status=429, headers={"Retry-After": self.retry_after})
        if fault == "timeout":
            await asyncio.sleep(self.hang_s)
            return web.json_response({"answer": "too late"})
        if fault == "drop":
            assert request.transport is not None
            request.transport.close()
            return web.Response(status=200)
        if fault == "malformed":
            return web.Response(text='{"answer": "unterminated', content_type="application/json")
        if fault == "empty":
            return web.json_response({"answer": "   "})
        return web.json_response({"answer": "x" * 70_000})

    # ------------------------------------------------------------ lifecycle

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/{state}/answer", self._handle)


def main() -> None:  # pragma: no cover - manual use: python -m tests.fakes.rag_service
    with FakeRagService(latency_s=0.05) as svc:
        print(json.dumps({s: svc.url(s) for s in svc.states}))
        threading.Event().wait()


if __name__ == "__main__":  # pragma: no cover
    main()
