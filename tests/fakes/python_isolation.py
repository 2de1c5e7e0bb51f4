"""Python-system targets for the execution settings: a native crash, calls that outlive
their timeout, an async target that blocks the loop, calls that log when they run."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from snapaudit.systems.python import PythonCall


def _log(path: str, **record: Any) -> None:
    """One JSON line, appended atomically (the calls may run in several processes)."""
    line = (json.dumps(record) + "\n").encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def spans(path: Path) -> list[dict[str, Any]]:
    """The logged calls, in the order they started."""
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return sorted(rows, key=lambda r: r["start"])


def overlaps(rows: list[dict[str, Any]]) -> int:
    """How many logged calls started before an earlier one ended."""
    count, ended = 0, float("-inf")
    for row in rows:
        count += row["start"] < ended
        ended = max(ended, row["end"])
    return count


def abort_once(call: PythonCall, marker: str, qid: str = "q001") -> str:
    """Aborts the process (SIGABRT) on the first call for ``qid`` of the whole run."""
    if call.question_id == qid:
        try:  # O_EXCL: of two workers that reach the question at once, only one aborts
            fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:
            return f"answer {call.question_id}"
        os.write(fd, f"{call.state} {call.repeat} {call.attempt}".encode())
        os.close(fd)
        os.abort()
    return f"answer {call.question_id}"


def logged_sleep(call: PythonCall, log: str, sleep_s: float = 0.05, slow_s: float = 0.0,
                 slow_qid: str = "q000") -> str:
    """Sleeps ``slow_s`` on the first attempt of ``slow_qid``'s first repeat and ``sleep_s``
    otherwise, logging when each call ran (wall clock) and in which process."""
    start = time.time()
    slow = (call.question_id == slow_qid and call.repeat == 1 and call.attempt == 1
            and slow_s > 0)
    time.sleep(float(slow_s if slow else sleep_s))
    _log(log, qid=call.question_id, state=call.state, repeat=call.repeat,
         attempt=call.attempt, start=start, end=time.time(), pid=os.getpid())
    return f"answer {call.question_id}"


_MODELS: dict[str, threading.Lock] = {}


def one_model(call: PythonCall, call_s: float = 1.5) -> str:
    """A model object per state that serves one call at a time (its own lock, as a
    llama.cpp wrapper that serializes would): each call takes ``call_s`` once it has it."""
    with _MODELS.setdefault(call.state, threading.Lock()):
        time.sleep(float(call_s))
    return f"answer {call.question_id}"


def hang_first(call: PythonCall, hang_s: float = 30.0, qid: str = "q000") -> str:
    """Hangs ``hang_s`` on the first attempt of ``qid`` (every state and repeat)."""
    if call.question_id == qid and call.attempt == 1:
        time.sleep(float(hang_s))
    return f"answer {call.question_id}"


async def blocking_async(call: PythonCall, block_s: float = 1.5, qid: str = "q000") -> str:
    """An async target that blocks the event loop (a sync call inside ``async def``) on the
    first attempt of ``qid``, and awaits properly otherwise."""
    if call.question_id == qid and call.attempt == 1:
        time.sleep(float(block_s))
    else:
        await asyncio.sleep(0.01)
    return f"answer {call.question_id}"


async def blocking_each(call: PythonCall, block_s: float = 0.4) -> str:
    """Blocks the loop ``block_s`` on every call (its latency is ``block_s`` per call)."""
    time.sleep(float(block_s))
    return f"answer {call.question_id}"


def with_resources(call: PythonCall, resources: dict[str, Any]) -> dict[str, Any]:
    """Answers with what ``setup`` returned in the attempt's meta."""
    return {"answer": f"answer {call.question_id}",
            "meta": {"setup_pid": resources["pid"], "call_pid": os.getpid()}}
