"""What reading steps from tool calls costs ``snapaudit import inspect`` (issue 39), at the
sizes users run: per state one inspect_ai log of N questions x 2 epochs, each sample a search
agent's conversation (search, read, search: 3 tool calls whose results are a JSON hit list or
text) with a 4 KB answer, and the same logs without the tool calls (the baseline, measured in
the same run). Needs the ``inspect`` extra.

The logs are written by inspect_ai itself (``write_eval_log``) around the header of a real
run of ``examples/import/inspect/make_tool_logs.py`` on ``mockllm/model``. Printed: the log
sizes; the import (read, steps, checks, rows) and its ratio to the import of the baseline
logs; with ``--old-reader`` also inspect_ai's ``read_eval_log_samples`` over the same logs
(what the import used before: it opens an .eval file again for every sample, so its time
grows with the square of the samples; keep ``--questions`` small with it).

Usage::

    python bench/bench_import_inspect.py                  # 10,000 questions, .eval
    python bench/bench_import_inspect.py --format json
    python bench/bench_import_inspect.py --questions 1000 --old-reader
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from inspect_ai.log import EvalLog, EvalSample, read_eval_log, read_eval_log_samples, write_eval_log
from inspect_ai.model import ChatMessageAssistant, ChatMessageTool, ChatMessageUser, ModelOutput
from inspect_ai.tool import ToolCall

from snapaudit.tables.foreign import import_logs

MAKE = Path(__file__).resolve().parents[1] / "examples/import/inspect/make_tool_logs.py"


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def conversation(state: str, i: int, epoch: int, answer: str, tools: bool) -> list[Any]:
    question = ChatMessageUser(content=f"question {i}: what is item {i}?")
    if not tools:
        return [question, ChatMessageAssistant(content=answer)]
    hits = [f"d{i}-{state}-{k}" for k in range(3)]
    calls = [("search", {"query": f"item {i}"}, json.dumps([{"id": d, "title": "t " * 20}
                                                            for d in hits])),
             ("read", {"doc_id": hits[0], "section": 1}, "text " * 60),
             ("search", {"query": f"item {i} details {epoch}"},
              json.dumps({"ids": hits[1:]}))]
    out: list[Any] = [question]
    for k, (name, args, result) in enumerate(calls):
        call_id = f"{i}-{epoch}-{k}"
        out.append(ChatMessageAssistant(content="", tool_calls=[
            ToolCall(id=call_id, function=name, arguments=args)]))
        out.append(ChatMessageTool(content=result, tool_call_id=call_id, function=name))
    return [*out, ChatMessageAssistant(content=answer)]


def write_logs(folder: Path, header: EvalLog, n: int, answer_bytes: int, tools: bool,
               fmt: str) -> dict[str, str]:
    paths = {}
    for state in ("old", "new"):
        samples = []
        for i in range(n):
            for epoch in (1, 2):
                answer = f"{state} {i % 7} " + "x" * answer_bytes
                samples.append(EvalSample(
                    id=f"q{i}", epoch=epoch, input=f"what is item {i}?", target="x",
                    messages=conversation(state, i, epoch, answer, tools),
                    output=ModelOutput.from_content("mockllm", answer)))
        dataset = header.eval.dataset.model_copy(update={
            "samples": n, "sample_ids": [f"q{i}" for i in range(n)]})
        spec = header.eval.model_copy(update={"dataset": dataset})
        log = header.model_copy(update={"eval": spec, "samples": samples, "reductions": None})
        paths[state] = str(folder / f"{state}-{'tools' if tools else 'plain'}.{fmt}")
        write_eval_log(log, paths[state])
    return paths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--questions", type=int, default=10_000)
    parser.add_argument("--answer-bytes", type=int, default=4096)
    parser.add_argument("--format", choices=["eval", "json"], default="eval")
    parser.add_argument("--old-reader", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        env = {**os.environ, "XDG_DATA_HOME": str(folder / "data")}
        subprocess.run([sys.executable, str(MAKE), str(folder / "run")], env=env, check=True,
                       capture_output=True)
        header = read_eval_log(str(next((folder / "run/old").glob("*.eval"))))
        print(f"{args.questions} questions x 2 epochs x 2 states, {args.answer_bytes} B "
              f"answers, .{args.format}; tools: 3 tool calls per sample\n")
        base = None
        for tools in (False, True):
            paths = write_logs(folder, header, args.questions, args.answer_bytes, tools,
                               args.format)
            size = sum(Path(p).stat().st_size for p in paths.values()) / 2**20
            old = ""
            if args.old_reader:
                read, _ = timed(lambda paths=paths: [  # type: ignore[misc]
                    sum(1 for _ in read_eval_log_samples(p)) for p in paths.values()])
                old = f"  read_eval_log_samples {read:7.2f} s"
            took, imported = timed(lambda paths=paths: import_logs(  # type: ignore[misc]
                "inspect", [paths["old"], paths["new"]],
                states={p: s for s, p in paths.items()}, doc_ids_key="ids"))
            base = base or took
            steps = sum(len(r.steps or ()) for r in imported.rows)
            print(f"{'tools' if tools else 'plain':5}  logs {size:6.1f} MiB  import "
                  f"{took:7.2f} s (x{took / base:4.2f})  rows {len(imported.rows)}  steps "
                  f"{steps}{old}")


if __name__ == "__main__":
    main()
