"""A two-shard testbed world for ``snapaudit attribute`` tests, with a fake generator that
answers from the evidence text: the planted document (shard 2) deterministically turns q0's
answer from "blue" into "green"; the other questions answer "other" in both states."""

from __future__ import annotations

import json
from pathlib import Path

from snapaudit.testbed.corpus.build import CorpusInput, build_corpus, shard_of
from tests.fakes.llm_server import LLMCall
from tests.helpers.protocol import protocol_head, save_protocol

SHARDS, SEED = 2, 0


def doc_id(stem: str, shard: int) -> str:
    """An id of ``stem`` that the corpus build places in 1-based ``shard``."""
    return next(f"{stem}{i}" for i in range(1000) if shard_of(f"{stem}{i}", SEED, SHARDS)
                == shard - 1)


def attribution_world(tmp: Path, extra: str = "") -> tuple[Path, str]:
    """The corpus (built under ``tmp/corpus``) and the planted document's id; ``extra`` is
    appended to the planted document's text."""
    planted = doc_id("plant", 2)
    docs = [(doc_id("skyA", 1), "the sky colour is blue on clear days"),
            (doc_id("skyB", 1), "notes on weather and clouds in the sky"),
            (planted, "sky sky colour sky PLANTED the sky colour is green" + extra),
            (doc_id("river", 1), "the river is wide and long"),
            (doc_id("riverB", 1), "a river of some length"),
            (doc_id("lake", 1), "the lake is deep and cold"),
            (doc_id("lakeB", 1), "lake notes"),
            (doc_id("lakeC", 2), "lake lake lake deep DISTRACT notes")]
    (tmp / "docs.jsonl").write_text("".join(
        json.dumps({"id": d, "url": f"https://x/{d}", "text": t}) + "\n" for d, t in docs))
    build_corpus([CorpusInput(tmp / "docs.jsonl", "generic")], tmp / "corpus", shards=SHARDS,
                 seed=SEED)
    questions = {"q0": "what sky colour?", "q1": "how is the river?", "q2": "how is the lake?"}
    (tmp / "questions.jsonl").write_text("".join(
        json.dumps({"id": q, "question": t}) + "\n" for q, t in questions.items()))
    (tmp / "gold.jsonl").write_text("".join(
        json.dumps({"question_id": q, "answers": ["blue"]}) + "\n" for q in questions))
    return tmp / "corpus", planted


def evidence_responder(call: LLMCall) -> str:
    user = call.user
    answer = "green" if "PLANTED" in user else "blue" if "sky" in user else "other"
    return json.dumps({"answer": answer})


def attribution_protocol(tmp: Path, corpus: Path, base_url: str, judge: str,
                         concurrency: int = 4) -> Path:
    text = protocol_head("attr", ["s1", "s2"], "s1", "s2", 3) + f"""[system]
kind = "testbed"
[testbed]
corpus = "{corpus}"
states = {{ s1 = 1, s2 = 2 }}
top_k = 2
[generator]
backend = "openai"
model = "fake-model"
base_url = "{base_url}"
timeout_s = 2.0
[judge]
{judge}
[gate]
profile = "exact-only"
[bootstrap]
draws = 200
seed = 11
[run]
concurrency = {concurrency}
max_attempts = 4
backoff_base_s = 0.0
backoff_max_s = 0.0
"""
    return save_protocol(tmp, text)
