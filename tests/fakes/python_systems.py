"""Python-system callables for tests: flaky, always failing, async, malformed."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

from snapaudit.systems.python import PythonCall


def flaky(call: PythonCall, fail_first: int = 1) -> dict[str, Any]:
    """Raises on the first ``fail_first`` attempts of every even-numbered question."""
    if int(call.question_id[-1]) % 2 == 0 and call.attempt <= fail_first:
        raise RuntimeError(f"index shard offline for {call.question_id}")
    answer = f"answer {call.question_id}" if call.state == "old" else f"other {call.question_id}"
    return {"answer": answer, "doc_ids": [f"d{call.question_id}"], "meta": {"n": 1}}


def always_fails(call: PythonCall) -> str:
    raise ValueError("bad credentials for the vector store")


async def async_answer(call: PythonCall, suffix: str = "") -> str:
    await asyncio.sleep(0)
    return f"answer {call.question_id}{suffix}"


def malformed(call: PythonCall) -> Any:
    return {"text": "no answer key"}


GC_SEEN: list[tuple[int, int]] = []  # (young threshold, freeze count) at each gc_probe call


def gc_probe(call: PythonCall) -> str:
    """Answers like :func:`async_answer` and notes the collector's pacing during the call."""
    GC_SEEN.append((gc.get_threshold()[0], gc.get_freeze_count()))
    return f"answer {call.question_id}"


def seeded(call: PythonCall, delay_s: float = 0.0) -> dict[str, Any]:
    """An answer that is a function of the attempt's seed (a sampling pipeline), after
    ``delay_s`` seconds; even-numbered questions raise on their first attempt."""
    import time

    time.sleep(float(delay_s))
    if int(call.question_id[-1]) % 2 == 0 and call.attempt == 1:
        raise RuntimeError(f"index shard offline for {call.question_id}")
    return {"answer": f"answer {call.seed % 7}", "doc_ids": [f"d{call.question_id}"]}


def verbose(call: PythonCall) -> dict[str, Any]:
    """A long-form answer, with document ids numbered anew by each state's index."""
    return {"answer": f"The answer to question {call.question_id} is, as far as the sources "
                      "say, the same one",
            "doc_ids": [f"{call.state}-{call.question_id}"]}


def seed_flaky(call: PythonCall, delay_s: float = 0.0) -> dict[str, Any]:
    """A deterministic sampling pipeline: after ``delay_s`` seconds, it raises when the
    attempt's seed is a multiple of 4 (a response: the retry draws a new seed), else answers
    with a function of the seed. Everything it does is a function of (question, seed), so a
    run killed anywhere and resumed must end as an uninterrupted one."""
    import time

    time.sleep(float(delay_s))
    if call.seed % 4 == 0:
        raise RuntimeError(f"sampled a malformed draw for {call.question_id}")
    return {"answer": f"answer {call.seed % 7}", "doc_ids": [f"d{call.question_id}"]}


TEXTS = {"a": "the sky colour is blue", "b": "notes on the weather",
         "p": "PLANTED the sky colour is green"}


def retrieving(call: PythonCall, docs: list[str] | None = None,
               evidence: tuple[tuple[str, str, str], ...] | None = None) -> dict[str, Any]:
    """A pipeline that retrieves on its own (``docs`` for q000, ["a", "b"] for the other
    questions) unless given ``evidence``; it answers "green" when a document it reads holds
    "PLANTED", else "blue"."""
    if evidence is not None:
        ids, texts = [d[0] for d in evidence], [d[2] for d in evidence]
    else:
        ids = list(docs or ["a", "b"]) if call.question_id == "q000" else ["a", "b"]
        texts = [TEXTS[d] for d in ids]
    return {"answer": "green" if any("PLANTED" in t for t in texts) else "blue",
            "doc_ids": ids}
