"""Embedded local generator: latency of n0 prompts vs 8 x 1,200-character evidence prompts,
tokens/s and JSON validity.

    .venv/bin/python bench/bench_local_generator.py [N0_CALLS] [EVIDENCE_CALLS]
    (env THREADS=1, TEMP=<float> to set the temperature; reads ../shared/data)
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
from pathlib import Path

from snapaudit.errors import TransportInvalid
from snapaudit.generate.base import GenerationRequest
from snapaudit.generate.config import GeneratorConfig
from snapaudit.generate.registry import build_generator
from snapaudit.prompt import ANSWER_SCHEMA, SYSTEM_PROMPT, parse_answer, user_message
from snapaudit.render import render_evidence
from snapaudit.retrieval.base import Document
from snapaudit.retrieval.config import RenderConfig

DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def load() -> tuple[list[str], list[str]]:
    with open(DATA / "nq_open" / "NQ-open.dev.jsonl", encoding="utf-8") as f:
        questions = [json.loads(line)["question"] for line in f]
    with open(DATA / "wikipedia" / "dpr_wiki_passages_1000.jsonl", encoding="utf-8") as f:
        passages = [json.loads(line)["contents"] for line in f]
    return questions, passages


def long_text(passages: list[str], start: int) -> str:
    out, j = "", start
    while len(out) < 1300:
        out += passages[j % len(passages)] + " "
        j += 1
    return out


def evidence(passages: list[str], k: int) -> str | None:
    docs = [Document(f"w{k}-{i}", f"https://en.wikipedia.org/{k}/{i}",
                     long_text(passages, k * 40 + i * 5)) for i in range(8)]
    return render_evidence(docs, RenderConfig())


async def main(n0: int, nev: int) -> None:
    questions, passages = load()
    temp = os.environ.get("TEMP")
    config = GeneratorConfig(backend="local", n_threads=int(os.environ.get("THREADS", "1")),
                             temperature=float(temp) if temp else None)
    generator = build_generator(config)
    rows: list[tuple[str, float, int, int, bool]] = []
    try:
        for k, question in enumerate(questions[: n0 + nev]):
            ev = evidence(passages, k) if k >= n0 else None
            request = GenerationRequest(system=SYSTEM_PROMPT, user=user_message(question, ev),
                                        seed=1000 + k, json_schema=ANSWER_SCHEMA, max_tokens=128)
            result = await generator.generate(request)
            try:
                parse_answer(result.text)
                ok = True
            except TransportInvalid:
                ok = False
            rows.append(("evidence" if ev else "n0", result.latency_s,
                         result.usage["prompt_tokens"], result.usage["completion_tokens"], ok))
    finally:
        await generator.aclose()
    for kind in ("n0", "evidence"):
        sel = [r for r in rows if r[0] == kind]
        if not sel:
            continue
        lat = [r[1] for r in sel]
        pt, ct = sum(r[2] for r in sel), sum(r[3] for r in sel)
        print(f"{kind}: n={len(sel)} latency median {statistics.median(lat):.2f} s "
              f"(min {min(lat):.2f}, max {max(lat):.2f}); prompt tokens {pt / len(sel):.0f}, "
              f"completion {ct / len(sel):.1f}; tokens/s {(pt + ct) / sum(lat):.1f}; "
              f"valid {sum(r[4] for r in sel)}/{len(sel)}")
    print(f"load average {os.getloadavg()}")


if __name__ == "__main__":
    args = [int(a) for a in sys.argv[1:3]] + [12, 8][len(sys.argv[1:3]):]
    asyncio.run(main(args[0], args[1]))
