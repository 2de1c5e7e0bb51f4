"""``snapaudit demo --agent``: a two-step search agent over the demo world, as a Python target.

Each call (one question, one state, one repeat):

1. searches the state's shards (BM25, top 2) for its first query: the question, or, for one
   call in four (drawn from the call's seed, so a repeat may differ), the question's keywords
   alone (an agent that words its query differently from one run to the next);
2. searches again for a second query chosen by a fixed rule from what the first search
   returned: the capitalized words of the top hit that the first query does not contain (the
   candidate the agent checks), or the keywords again when there are none;
3. answers with the embedded model from the documents of both searches (the testbed's prompt
   and answer schema).

It returns the answer, the documents it read and its two steps, so the audit measures the
answers and the trajectories alike (docs/agents.md). The model is loaded once per state by
:func:`setup`; the state's shard count and the corpus come from the state's kwargs.
"""

from __future__ import annotations

import random
import re
from typing import Any

from snapaudit.systems.python_call import PythonCall
from snapaudit.testbed.generate.base import GenerationRequest, Generator
from snapaudit.testbed.generate.config import LocalGeneratorConfig
from snapaudit.testbed.generate.registry import build_generator
from snapaudit.testbed.prompt import ANSWER_SCHEMA, SYSTEM_PROMPT, parse_answer, user_message
from snapaudit.testbed.render import render_evidence
from snapaudit.testbed.retrieval.base import Document, Retriever
from snapaudit.testbed.retrieval.config import TestbedConfig
from snapaudit.testbed.retrieval.registry import build_retriever
from snapaudit.testbed.retrieval.tokenize import STOPWORDS

TOP_K = 2  # documents per search
REWORD = 0.25  # share of calls whose first query is the question's keywords alone
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")
# the agent's generation: the demo's generator settings
TEMPERATURE, MAX_TOKENS = 0.1, 144


class AgentTools:
    """What one state's agent holds: the model (loaded once) and its search index."""

    def __init__(self, generator: Generator) -> None:
        self.generator = generator
        self.retrievers: dict[str, Retriever] = {}

    def retriever(self, corpus: str) -> Retriever:
        if corpus not in self.retrievers:
            self.retrievers[corpus] = build_retriever(TestbedConfig(corpus=corpus))
        return self.retrievers[corpus]


def setup(n_threads: int = 2) -> AgentTools:
    """The agent's model: the embedded generator (SmolLM2 through llama.cpp)."""
    return AgentTools(build_generator(LocalGeneratorConfig(
        n_threads=n_threads, temperature=TEMPERATURE, max_tokens=MAX_TOKENS)))


def keywords(text: str) -> str:
    """The words of ``text`` that are not stop words, in order."""
    return " ".join(w for w in _WORD.findall(text) if w.lower() not in STOPWORDS)


def first_query(call: PythonCall) -> str:
    """The question, or (one call in four, by the call's seed) its keywords alone."""
    reword = random.Random(call.seed).random() < REWORD
    return keywords(call.question) if reword else call.question


def second_query(query: str, top: Document | None) -> str:
    """The capitalized words of the top hit that ``query`` lacks, else its keywords."""
    known = {w.lower() for w in _WORD.findall(query)}
    if top is not None:
        found = [w for w in _WORD.findall(top.text)
                 if w[0].isupper() and w.lower() not in known and w.lower() not in STOPWORDS]
        if found:
            return " ".join(dict.fromkeys(found))
    return keywords(query)


async def answer(call: PythonCall, *, resources: AgentTools, corpus: str,
                 shards: int) -> dict[str, Any]:
    """One call of the agent: two searches, then the model's answer from what they found."""
    index = resources.retriever(corpus)
    steps, read = [], {}
    query = first_query(call)
    for _ in range(2):
        hits = await index.asearch(query, shards, TOP_K)
        docs = [index.document(h.doc_id) for h in hits]
        steps.append({"tool": "search", "input": query, "doc_ids": [d.doc_id for d in docs]})
        read.update({d.doc_id: d for d in docs})
        query = second_query(query, docs[0] if docs else None)
    evidence = render_evidence(list(read.values()), TestbedConfig().render)
    result = await resources.generator.generate(GenerationRequest(
        system=SYSTEM_PROMPT, user=user_message(call.question, evidence), seed=call.seed,
        json_schema=ANSWER_SCHEMA, max_tokens=MAX_TOKENS))
    return {"answer": parse_answer(result.text), "doc_ids": list(read), "steps": steps,
            "meta": {"model": result.model}}
