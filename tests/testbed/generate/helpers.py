"""Shared helpers: one generator call against the fake server, in a fresh event loop."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from snapaudit.testbed.corpus.build import CorpusInput, build_corpus
from snapaudit.testbed.generate.base import GenerationRequest, GenerationResult
from snapaudit.testbed.generate.config import GeneratorConfig, generator_config
from snapaudit.testbed.generate.registry import build_generator
from snapaudit.testbed.prompt import ANSWER_SCHEMA, SYSTEM_PROMPT, user_message
from tests.fakes.llm_server import FakeLLMServer

REQUEST = GenerationRequest(
    system=SYSTEM_PROMPT,
    user=user_message("What is the capital of France?", None),
    seed=1234,
    json_schema=ANSWER_SCHEMA,
    max_tokens=64,
)


def config_for(server: FakeLLMServer, backend: str, **fields: Any) -> GeneratorConfig:
    base = server.openai_base_url if backend == "openai" else server.anthropic_base_url
    return generator_config(backend=backend, model="fake-model",  # type: ignore[arg-type]
                           base_url=base, **fields)


async def _call(config: GeneratorConfig, request: GenerationRequest) -> GenerationResult:
    generator = build_generator(config)
    try:
        return await generator.generate(request)
    finally:
        await generator.aclose()


def call(config: GeneratorConfig, request: GenerationRequest = REQUEST) -> GenerationResult:
    return asyncio.run(_call(config, request))


TOPICS = ["river", "stone", "cloud", "maple", "harbor", "lantern"]


def write_world(tmp: Path) -> Path:
    docs = [{"id": f"d{i:02d}", "url": f"https://example.org/{i}",
             "text": f"{TOPICS[i % 6]} facts number {i} about the {TOPICS[(i * 5) % 6]}"}
            for i in range(24)]
    (tmp / "docs.jsonl").write_text("".join(json.dumps(d) + "\n" for d in docs))
    corpus = tmp / "corpus"
    build_corpus([CorpusInput(tmp / "docs.jsonl", "generic")], corpus, shards=3, seed=0)
    with open(tmp / "questions.jsonl", "w", encoding="utf-8") as f, \
            open(tmp / "gold.jsonl", "w", encoding="utf-8") as g:
        for i, topic in enumerate(TOPICS):
            f.write(json.dumps({"id": f"q{i}", "question": f"what about the {topic}?"}) + "\n")
            g.write(json.dumps({"question_id": f"q{i}", "answers": [f"ans-{i % 3}-0"]}) + "\n")
    return corpus


def write_protocol(tmp: Path, corpus: Path, generator: str, *, top_k: int = 2,
                   states: str = "n0 = 0, n1 = 1, n3 = 3", size: int = 6,
                   run_timeout_s: float = 2.0) -> Path:
    """A testbed protocol over ``corpus``; ``generator`` is the body of [generator]."""
    order = json.dumps([s.split("=")[0].strip() for s in states.split(",")])
    text = f"""
name = "testbed"
[states]
order = {order}
old = "n1"
new = "n3"
[design]
repeats = 2
seed = 7
[cohort]
source = "jsonl"
path = "questions.jsonl"
size = {size}
seed = 3
[gold]
path = "gold.jsonl"
format = "jsonl"
benchmark = "nq"
[system]
kind = "testbed"
[testbed]
corpus = "{corpus}"
states = {{ {states} }}
top_k = {top_k}
[generator]
{generator}
[judge]
kind = "none"
[gate]
profile = "exact-only"
[bootstrap]
draws = 200
seed = 11
[run]
concurrency = 4
timeout_s = {run_timeout_s}
max_attempts = 8
backoff_base_s = 0.0
backoff_max_s = 0.0
"""
    path = tmp / "protocol.toml"
    path.write_text(text, encoding="utf-8")
    return path
