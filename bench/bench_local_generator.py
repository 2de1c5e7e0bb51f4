"""Embedded local generator: the saved prefix state vs resetting the KV cache every call.

    .venv/bin/python bench/bench_local_generator.py [QUESTIONS]
    env THREADS=1,2 (thread counts to compare), TOP_K=4 (documents per evidence prompt),
        MAX_TOKENS=144, TEMP=0.1 (the demo protocol), SHUFFLE=1 (0 skips the reproducibility check)

Prompts are the demo's: each question of the demo world alone (n0) and with TOP_K world
documents as evidence. For every thread count both generators answer every prompt in the
same run, interleaved (so load drift hits both alike); the ratios compare their summed
latencies. The prefix generator then answers the prompts again in a shuffled order and
the script counts answers that differ. The baseline replica restores the former
``llm.reset()`` before every call. Both keep no whole-prompt states and run one replica
(``bench/bench_local_throughput.py`` measures those).
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import sys
import time
from typing import Any

from snapaudit.demo.world import build_world
from snapaudit.errors import TransportInvalid
from snapaudit.testbed.generate.base import GenerationRequest, GenerationResult
from snapaudit.testbed.generate.config import generator_config
from snapaudit.testbed.generate.local import LocalGenerator
from snapaudit.testbed.generate.local_model import LocalModel
from snapaudit.testbed.prompt import ANSWER_SCHEMA, SYSTEM_PROMPT, parse_answer, user_message
from snapaudit.testbed.render import render_evidence
from snapaudit.testbed.retrieval.base import Document
from snapaudit.testbed.retrieval.config import RenderConfig


class ResetModel(LocalModel):
    """The former behaviour: a full prefill after ``llm.reset()`` in every call."""

    def _load_prefix(self, llm: Any, system: str) -> int:
        llm.reset()
        return 0


def prompts(n_questions: int, top_k: int) -> list[tuple[str, str]]:
    world = build_world(max(n_questions, 5), 7)
    docs = [Document(d["id"], d["url"], d["text"]) for d in world.docs]
    rng = random.Random(7)
    out: list[tuple[str, str]] = []
    for q in world.questions[:n_questions]:
        out.append(("n0", user_message(q["question"], None)))
        evidence = render_evidence(rng.sample(docs, top_k), RenderConfig())
        out.append((f"top{top_k}", user_message(q["question"], evidence)))
    return out


def request(user: str, seed: int, max_tokens: int) -> GenerationRequest:
    return GenerationRequest(system=SYSTEM_PROMPT, user=user, seed=seed,
                             json_schema=ANSWER_SCHEMA, max_tokens=max_tokens)


def valid(result: GenerationResult) -> bool:
    try:
        parse_answer(result.text)
    except TransportInvalid:
        return False
    return True


async def compare(threads: int, cases: list[tuple[str, str]], max_tokens: int,
                  temperature: float, shuffle: bool) -> None:
    config = generator_config(backend="local", n_threads=threads, temperature=temperature,
                              replicas=1, prompt_cache_mb=0)
    gens: dict[str, LocalGenerator] = {"reset": LocalGenerator(config, model_type=ResetModel),
                                       "prefix": LocalGenerator(config)}
    rows: dict[str, list[tuple[str, GenerationResult]]] = {"reset": [], "prefix": []}
    try:
        for gen in gens.values():  # load the model and build the prefix state
            await gen.generate(request(cases[0][1], 1, max_tokens))
        for i, (kind, user) in enumerate(cases):
            order = ["reset", "prefix"] if i % 2 == 0 else ["prefix", "reset"]
            for mode in order:
                rows[mode].append((kind, await gens[mode].generate(
                    request(user, 1000 + i, max_tokens))))
        changed = -1
        if shuffle:
            idx = list(range(len(cases)))
            random.Random(threads).shuffle(idx)
            again = {i: await gens["prefix"].generate(request(cases[i][1], 1000 + i, max_tokens))
                     for i in idx}
            changed = sum(again[i].text != rows["prefix"][i][1].text for i in idx)
    finally:
        for gen in gens.values():
            await gen.aclose()
    report(threads, rows, changed)


def report(threads: int, rows: dict[str, list[tuple[str, GenerationResult]]],
           changed: int) -> None:
    kinds = sorted({k for k, _ in rows["reset"]})
    for kind in [*kinds, "all"]:
        sums = {}
        for mode, sel in rows.items():
            res = [r for k, r in sel if kind in (k, "all")]
            lat = [r.latency_s for r in res]
            sums[mode] = sum(lat)
            print(f"threads={threads} {mode:6s} {kind:5s} n={len(res)} median "
                  f"{statistics.median(lat):.2f} s (min {min(lat):.2f}, max {max(lat):.2f}) "
                  f"prompt tokens {statistics.mean(r.usage['prompt_tokens'] for r in res):.0f} "
                  f"completion {statistics.mean(r.usage['completion_tokens'] for r in res):.1f} "
                  f"valid {sum(valid(r) for r in res)}/{len(res)}")
        print(f"threads={threads} {kind}: prefix/reset latency ratio "
              f"{sums['prefix'] / sums['reset']:.2f} (sum {sums['prefix']:.1f} s vs "
              f"{sums['reset']:.1f} s)")
    if changed >= 0:
        print(f"threads={threads} prefix, shuffled re-run: {changed}/{len(rows['prefix'])} "
              "answers changed")


async def main(n_questions: int) -> None:
    top_k = int(os.environ.get("TOP_K", "4"))
    cases = prompts(n_questions, top_k)
    for threads in [int(t) for t in os.environ.get("THREADS", "1,2").split(",")]:
        start = time.perf_counter()
        await compare(threads, cases, int(os.environ.get("MAX_TOKENS", "144")),
                      float(os.environ.get("TEMP", "0.1")), os.environ.get("SHUFFLE") != "0")
        print(f"threads={threads} wall {time.perf_counter() - start:.1f} s, "
              f"load average {os.getloadavg()}")


if __name__ == "__main__":
    if len(sys.argv) > 2 or (len(sys.argv) == 2 and not sys.argv[1].isdigit()):
        sys.exit(__doc__)  # --help, or anything that is not a question count
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 8))
