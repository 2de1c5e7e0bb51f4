"""Where an embedded-model answer call spends its CPU, against a bare llama-cpp-python call.

    .venv/bin/python bench/bench_local_profile.py RUN_DIR [N]

RUN_DIR: a testbed run whose retrieval is locked (e.g. the ``run-before.smoke-6`` that
``bench_local_throughput.py --work DIR`` keeps). For the first N repeat-1 prompts of its
schedule (default 12), one single-threaded ``Llama`` runs four ways in turn and the thread's
CPU time (robust on a shared machine) is summed by phase:

- ``bare``: ``reset()``, full prefill, llama-cpp-python's own ``json_object`` schema grammar;
- ``before``: the saved system prefix loaded with ``Llama.load_state`` (issue 42's code),
  the rest evaluated, the GBNF answer grammar;
- ``now first``: the prefix restored with ``prompt_states.restore``, the rest evaluated and
  the whole prompt saved (``prompt_states.save``);
- ``now repeat``: the whole prompt restored, decode only.

It also checks that ``before``, ``now first`` and ``now repeat`` give the same text (same
seed) and counts the bare call's agreements.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_local_throughput import prompts

PHASES = ("load", "prefill", "decode", "completion tokens")


def main(run_dir: Path, n: int) -> None:
    from llama_cpp import Llama
    from llama_cpp.llama_grammar import LlamaGrammar

    from snapaudit.testbed.generate._gbnf import grammar_for
    from snapaudit.testbed.generate.local import default_model_path
    from snapaudit.testbed.generate.local_model import chat_prompt_tokens, shared_prefix
    from snapaudit.testbed.generate.prompt_states import restore, save
    from snapaudit.testbed.prompt import ANSWER_SCHEMA

    calls = [c for c in prompts(run_dir) if c["key"].endswith("|1")][:n]
    llm = Llama(model_path=str(default_model_path()), n_ctx=4096, n_threads=1,
                n_threads_batch=1, verbose=False)
    gbnf = {"grammar": LlamaGrammar.from_string(grammar_for(ANSWER_SCHEMA), verbose=False)}
    system = calls[0]["system"]
    prefix = shared_prefix(llm, system)
    llm.reset()
    llm.eval(prefix)
    old, new = llm.save_state(), save(llm, prefix)
    sums: dict[str, list[float]] = {m: [0.0] * 4 for m in
                                    ("bare", "before", "now first", "now repeat")}
    same = agree = 0

    def call(mode: str, c: dict[str, Any], load: Any, tokens: list[int], rest: list[int],
             fmt: dict[str, Any]) -> tuple[str, Any]:
        t0 = time.thread_time()
        load()
        t1 = time.thread_time()
        if rest:
            llm.eval(rest)
        state = save(llm, tokens) if mode == "now first" else None
        t2 = time.thread_time()
        out = llm.create_chat_completion(
            messages=[{"role": "system", "content": c["system"]},
                      {"role": "user", "content": c["user"]}],
            max_tokens=c["max_tokens"], seed=c["seed"], **fmt,
            **({"temperature": c["temperature"]} if c["temperature"] is not None else {}))
        t3 = time.thread_time()
        for i, v in enumerate((t1 - t0, t2 - t1, t3 - t2, out["usage"]["completion_tokens"])):
            sums[mode][i] += v
        return str(out["choices"][0]["message"]["content"]), state

    for c in calls:
        tokens = chat_prompt_tokens(llm, system, c["user"])
        rest = tokens[len(prefix):]
        bare, _ = call("bare", c, llm.reset, tokens, tokens,
                       {"response_format": {"type": "json_object", "schema": ANSWER_SCHEMA}})
        before, _ = call("before", c, lambda: llm.load_state(old), tokens, rest, gbnf)
        first, whole = call("now first", c, lambda: restore(llm, new), tokens, rest, gbnf)
        repeat, _ = call("now repeat", c, lambda s=whole: restore(llm, s), tokens, [], gbnf)
        same += before == first == repeat
        agree += bare == before
        print(f"{c['key']:14s} {len(tokens):5d} prompt tokens", flush=True)
    print(f"\n{len(calls)} prompts; thread CPU seconds summed by phase")
    print("| call | " + " | ".join(PHASES) + " |\n|---|---|---|---|---|")
    for mode, row in sums.items():
        print(f"| {mode} | " + " | ".join(f"{v:.3f}" if i < 3 else f"{v:.0f}"
                                         for i, v in enumerate(row)) + " |")
    print(f"before == now first == now repeat: {same}/{len(calls)}; bare == before: "
          f"{agree}/{len(calls)}")
    llm.close()


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 12)
