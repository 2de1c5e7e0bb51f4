"""A small RAG pipeline in plain Python: BM25 over a handful of passages + a fake generator.

``answer(call, index=..., k=...)`` is the callable a protocol names as
``target = "pipeline:answer"``. The "old" snapshot searches ``passages_v1.jsonl``; the "new"
one searches ``passages_v2.jsonl``, in which three facts were updated. The generator is a
stand-in for an LLM: it answers with the answer span of the best passage and, like a sampled
model, varies its wording by the call's seed (a real pipeline would call its LLM here).
Standard library only.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
_TOKEN = re.compile(r"[a-z0-9]+")
_STOP = {"the", "a", "an", "of", "is", "was", "what", "which", "who", "in", "to", "and", "how",
         "many", "does", "did", "when", "where", "for", "on", "by", "with"}


def tokens(text: str) -> list[str]:
    return [t for t in _TOKEN.findall(text.lower()) if t not in _STOP]


class BM25:
    """Okapi BM25 (k1 = 1.2, b = 0.75) over a list of passages."""

    def __init__(self, passages: list[dict[str, str]], k1: float = 1.2, b: float = 0.75):
        self.passages = passages
        self.docs = [Counter(tokens(p["text"])) for p in passages]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.lengths) / len(self.lengths)
        df = Counter(t for d in self.docs for t in d)
        n = len(passages)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}
        self.k1, self.b = k1, b

    def search(self, query: str, k: int) -> list[dict[str, str]]:
        q = tokens(query)
        scores = []
        for i, (doc, length) in enumerate(zip(self.docs, self.lengths, strict=True)):
            s = 0.0
            for t in q:
                f = doc.get(t, 0)
                if f:
                    norm = f + self.k1 * (1 - self.b + self.b * length / self.avg)
                    s += self.idf[t] * f * (self.k1 + 1) / norm
            scores.append((-s, self.passages[i]["id"], i))
        return [self.passages[i] for _, _, i in sorted(scores)[:k]]


@lru_cache(maxsize=None)
def _index(name: str) -> BM25:
    with open(HERE / f"passages_{name}.jsonl", encoding="utf-8") as f:
        return BM25([json.loads(line) for line in f if line.strip()])


def generate(question: str, passages: list[dict[str, str]], seed: int) -> str:
    """A fake LLM: the best passage's answer span, in one of two wordings chosen by seed."""
    if not passages:
        return "UNKNOWN"
    span = passages[0]["answer"]
    return span if seed % 2 == 0 else f"{span}."


def answer(call: Any, index: str = "v1", k: int = 3, delay_s: float = 0.0) -> dict[str, Any]:
    """The pipeline: retrieve top-k passages of ``index``, generate, return answer + doc ids."""
    if delay_s:
        time.sleep(delay_s)
    hits = _index(index).search(call.question, k)
    return {"answer": generate(call.question, hits, call.seed),
            "doc_ids": [h["id"] for h in hits], "meta": {"index": index}}
