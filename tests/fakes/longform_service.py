"""A loopback RAG service that answers in paragraphs (400-4,000 bytes) and a judge for them.

Every answer states one key fact (``ORION-<n>``; a planted change turns it into
``VEGA-<n>`` in the new states), wrapped in one of several phrasings and a repeat-dependent
amount of filler, so the answers of one state are paraphrases of each other.
:func:`judge_responder` is an OpenAI-compatible judge for :class:`tests.fakes.llm_server.
FakeLLMServer`: two answers are the same iff they state the same key fact; it records every
verdict it gives, by answer text.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakes.llm_server import LLMCall
from tests.fakes.loopback import LoopbackServer

FACT = re.compile(r"\b(?:ORION|VEGA)-\d+\b")
_OPENINGS = (
    "Based on the retrieved documents, the answer is {fact}.",
    "Short version: {fact}. Here is the longer explanation.",
    "The sources agree on this point, and they point to {fact} as the answer.",
    "After reviewing the knowledge base I can say that it is {fact}.",
)
_FILLER = (
    "The documentation describes the background of this topic in some detail.",
    "Several internal pages mention related projects, which are not relevant here.",
    "Note that the wording in older pages differs slightly, but the substance is unchanged.",
    "If you need more context, the linked handbook section covers the procedure end to end.",
    "Formatting and citation style vary across the sources that were consulted.",
    "This summary leaves out minor details that do not affect the conclusion.",
)


def _h(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256("|".join(map(str, parts)).encode()).digest()[:8], "big")


def long_answer(question_id: str, state: str, repeat: int, planted: bool) -> str:
    n = _h("fact", question_id) % 900 + 100
    fact = f"VEGA-{n}" if planted else f"ORION-{n}"
    opening = _OPENINGS[_h("open", question_id, state, repeat) % len(_OPENINGS)]
    sentences = [opening.format(fact=fact)]
    count = 6 + _h("len", question_id, state, repeat) % 40  # about 450 to 3,600 bytes
    sentences += [_FILLER[(_h("f", question_id, state, repeat) + i) % len(_FILLER)]
                  for i in range(count)]
    sentences.append(f"(answer variant {state}/{repeat} for {question_id})")
    return " ".join(sentences)


@dataclass
class LongFormService(LoopbackServer):
    states: tuple[str, ...] = ("old", "new")
    planted: frozenset[str] = frozenset()  # question ids whose key fact changes after old
    hits: Counter[str] = field(default_factory=Counter)
    sent: dict[str, tuple[str, str, int]] = field(default_factory=dict)  # text -> cell

    def __post_init__(self) -> None:
        LoopbackServer.__init__(self)

    def url(self, state: str) -> str:
        return f"http://127.0.0.1:{self.port}/{state}/answer"

    def routes(self, app: web.Application) -> None:
        app.router.add_post("/{state}/answer", self._handle)

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        state = request.match_info["state"]
        body: dict[str, Any] = await request.json()
        qid, repeat = str(body["question_id"]), int(body.get("repeat", 1))
        self.hits[f"{qid}|{state}|{repeat}"] += 1
        text = long_answer(qid, state, repeat, qid in self.planted and state != self.states[0])
        self.sent[" ".join(text.split())] = (qid, state, repeat)
        return web.json_response({"answer": text})


@dataclass
class FactJudge:
    """The judge's responder; ``verdicts`` collects (answer text a, answer text b, same)."""

    verdicts: list[tuple[str, str, bool]] = field(default_factory=list)
    packets: list[int] = field(default_factory=list)  # pairs per packet

    def __call__(self, call: LLMCall) -> str:
        answers_part = call.user.split("Answers:\n", 1)[1].split("\n\nPairs to decide:\n", 1)
        answers = {}
        for line in answers_part[0].splitlines():
            label, _, text = line.partition(": ")
            answers[label] = text
        pairs = [tuple(p.split("-")) for p in answers_part[1].split()]
        items = []
        for a, b in pairs:
            fa, fb = FACT.search(answers[a]), FACT.search(answers[b])
            same = bool(fa and fb and fa.group() == fb.group())
            self.verdicts.append((answers[a], answers[b], same))
            items.append({"a": a, "b": b, "same": same})
        self.packets.append(len(pairs))
        return json.dumps({"pairs": items})
