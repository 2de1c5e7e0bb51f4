"""Answer-stage throughput of the embedded model against a bare llama-cpp-python loop.

    .venv/bin/python bench/bench_local_throughput.py [--limit 6] [--demo-questions 16]
        [--skip-testbed] [--skip-demo] [--work DIR]

Testbed (issue 42's run): a corpus from ../shared/data (NQ-open oracle passages + the DPR
Wikipedia sample, 7 shards), ``snapaudit init --kind testbed`` (BM25 top-8 at 1,200
characters, r = 2), ``snapaudit run --limit N`` twice: ``before`` (one replica, no
whole-prompt reuse: the schedule before issue 42) and ``now`` (the defaults). Demo:
``snapaudit demo`` with the demo's settings before issue 42 (``n_threads = 2``, one replica,
no reuse, ``[run] concurrency = 1``) and with today's. Each run is a subprocess; its answer
stage is timed from the ledger (first attempt started to last finished), its peak RSS and
CPU seconds from ``wait4``. The baseline, in the same bench run: one ``llama_cpp.Llama``
answering the same prompts (rebuilt from the ``before`` run's locked evidence, same seeds,
system prompt, ``max_tokens`` and sampling) one after another, each after ``reset()`` (a full
prefill), JSON through ``response_format = {"type": "json_object", "schema": ...}``; twice:
``Llama(n_threads=1)`` as a user writes it (llama-cpp-python then prefills on every core:
``n_threads_batch`` defaults to the CPU count) and with ``n_threads_batch=1`` too (one
thread). Prints the cores, the load average around every part, cells per minute, CPU
seconds per cell, ratios, and whether the answers (and the demo's results.json numbers) are
identical.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA = REPO.parent / "shared" / "data"
CLI = [str(Path(sys.executable).with_name("snapaudit"))]
BEFORE = ["generator.replicas=1", "generator.prompt_cache_mb=0"]
DEMO_BEFORE = [*BEFORE, "generator.n_threads=2", "run.concurrency=1"]


def load() -> str:
    return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())


def run(cmd: list[str]) -> tuple[float, float, float]:
    """Wall seconds, peak RSS (MB) and CPU seconds of ``cmd`` (output discarded; fails
    loudly)."""
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # wait4 reaped it: tell Popen
        if proc.returncode != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(cmd)} failed ({proc.returncode}):\n"
                             f"{err.read().decode()[-2000:]}")
    return wall, usage.ru_maxrss / 1024, usage.ru_utime + usage.ru_stime


def answer_stage(run_dir: Path) -> tuple[int, float, dict[str, str]]:
    """Accepted answer cells, the stage's seconds, and cell key -> answer."""
    with sqlite3.connect(run_dir / "ledger.sqlite") as db:
        first, last = db.execute("SELECT MIN(started_at), MAX(finished_at) FROM attempts "
                                 "WHERE stage='answer'").fetchone()
        cells = {k: json.loads(p)["answer"] for k, p in db.execute(
            "SELECT cell_key, payload FROM cells WHERE stage='answer'")}
    return len(cells), float(last - first), cells


def prompts(run_dir: Path) -> list[dict[str, Any]]:
    """The answer calls of a run (attempt 1 of each cell), in schedule order."""
    from snapaudit.run.execution.schedule import answer_schedule, derive_seed
    from snapaudit.run.record import cohort
    from snapaudit.run.record.protocol import load_protocol
    from snapaudit.run.record.rundir import RunDir
    from snapaudit.run.stages.keys import AnswerKey
    from snapaudit.run.stages.retrieval import locked_evidence
    from snapaudit.testbed.prompt import SYSTEM_PROMPT, user_message

    rd = RunDir(run_dir, read_only=True)
    proto = load_protocol(rd.protocol_path)
    evidence = locked_evidence(rd.ledger())
    text = {q.question_id: q.question for q in cohort.read_manifest(rd.cohort_path)}
    out = []
    for sc in answer_schedule(list(text), proto.states.order, proto.design.repeats):
        key = AnswerKey(sc.question_id, sc.state, sc.repeat).encode()
        ev = evidence.get((sc.question_id, sc.state))
        out.append({"key": key, "system": SYSTEM_PROMPT,
                    "user": user_message(text[sc.question_id], ev.rendered if ev else None),
                    "seed": derive_seed(proto.design.seed, "answer", key, 1),
                    "max_tokens": proto.generator.max_tokens,
                    "temperature": proto.generator.temperature})
    return out


def bare_loop(calls: list[dict[str, Any]], batch_threads: int | None
              ) -> tuple[float, float, dict[str, str]]:
    """Wall and CPU seconds of the baseline loop (module doc) and cell key -> answer text."""
    from llama_cpp import Llama

    from snapaudit.testbed.generate.local import default_model_path
    from snapaudit.testbed.prompt import ANSWER_SCHEMA

    llm = Llama(model_path=str(default_model_path()), n_ctx=4096, n_threads=1,
                n_threads_batch=batch_threads, verbose=False)
    texts: dict[str, str] = {}
    t0, c0 = time.perf_counter(), time.process_time()
    for c in calls:
        llm.reset()
        sampling = {"temperature": c["temperature"]} if c["temperature"] is not None else {}
        out = llm.create_chat_completion(
            messages=[{"role": "system", "content": c["system"]},
                      {"role": "user", "content": c["user"]}],
            max_tokens=c["max_tokens"], seed=c["seed"],
            response_format={"type": "json_object", "schema": ANSWER_SCHEMA}, **sampling)
        texts[c["key"]] = out["choices"][0]["message"]["content"] or ""
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    llm.close()
    return seconds, cpu, texts


def compare_runs(label: str, runs: dict[str, Path], cpu: dict[str, float]) -> None:
    """Time the bare loops on the ``before`` run's prompts; every run's answer stage
    against them; compare the answers. ``cpu``: each run's CPU seconds (whole command)."""
    stages = {name: answer_stage(d) for name, d in runs.items()}
    calls = prompts(runs["before"])
    bare: dict[str, float] = {}
    for name, threads in (("bare loop, Llama(n_threads=1)", None),
                          ("bare loop, n_threads_batch=1 too", 1)):
        print(f"{label}: {name} on {len(calls)} prompts ({load()})", flush=True)
        seconds, used, texts = bare_loop(calls, threads)
        bare[name] = seconds
        print(f"  {name:34s} {len(calls)} cells in {seconds:7.1f} s = "
              f"{60 * len(calls) / seconds:6.2f} cells/min, CPU {used / len(calls):5.2f} s a "
              f"cell ({load()})", flush=True)
    for name, (cells, seconds, _) in stages.items():
        ratios = ", ".join(f"{b * cells / len(calls) / seconds:4.2f}x" for b in bare.values())
        print(f"  snapaudit {name:24s} {cells} cells in {seconds:7.1f} s = "
              f"{60 * cells / seconds:6.2f} cells/min, CPU {cpu[name] / cells:5.2f} s a cell "
              f"(whole command); vs the bare loops: {ratios}")
    answers = {name: a for name, (_, _, a) in stages.items()}
    same = sum(answers["now"][k] == v for k, v in answers["before"].items())
    print(f"  answers identical now vs before: {same}/{len(answers['before'])}")
    agree = sum(valid_answer(t) == answers["before"].get(k) for k, t in texts.items())
    print(f"  bare loop answers equal to before's: {agree}/{len(texts)} (its own grammar)")


def valid_answer(text: str) -> str | None:
    from snapaudit.errors import TransportInvalid
    from snapaudit.testbed.prompt import parse_answer

    try:
        return parse_answer(text)
    except TransportInvalid:
        return None


def testbed(work: Path, limit: int) -> None:
    corpus, proto = work / "nq-corpus", work / "testbed.toml"
    if not corpus.exists():
        subprocess.run([*CLI, "corpus", "build", "--out", str(corpus), "--shards", "7",
                        "--seed", "0", "--input", str(DATA / "nq_open/nq-open-oracle.jsonl.gz"),
                        "--format", "nq-oracle", "--input",
                        str(DATA / "wikipedia/dpr_wiki_passages_1000.jsonl"), "--format", "dpr",
                        "--progress", "silent"], check=True, stdout=subprocess.DEVNULL)
    if not proto.exists():
        subprocess.run([*CLI, "init", "--kind", "testbed", "--out", str(proto)], check=True,
                       stdout=subprocess.DEVNULL)
    nq = DATA / "nq_open" / "NQ-open.dev.jsonl"
    sets = [f'testbed.corpus="{corpus}"', f'cohort.path="{nq}"', f'gold.path="{nq}"']
    runs: dict[str, Path] = {}
    cpu: dict[str, float] = {}
    for name, extra in (("before", BEFORE), ("now", [])):
        run_dir = work / f"run-{name}"
        print(f"testbed {name}: snapaudit run --limit {limit} ({load()})", flush=True)
        wall, rss, cpu[name] = run([*CLI, "run", str(proto), "--run-dir", str(run_dir),
                                    "--limit", str(limit), "--progress", "silent",
                                    *[a for s in [*sets, *extra] for a in ("--set", s)]])
        runs[name] = run_dir.with_name(f"{run_dir.name}.smoke-{limit}")
        print(f"  wall {wall:.1f} s, peak RSS {rss:.0f} MB ({load()})", flush=True)
    compare_runs(f"testbed --limit {limit}", runs, cpu)


def demo(work: Path, questions: int) -> None:
    runs: dict[str, Path] = {}
    results = {}
    cpu: dict[str, float] = {}
    walls: dict[str, float] = {}
    for name, extra in (("before", DEMO_BEFORE), ("now", [])):
        out = work / f"demo-{name}"
        print(f"demo {name}: snapaudit demo --questions {questions} ({load()})", flush=True)
        walls[name], rss, cpu[name] = run([*CLI, "demo", "--out", str(out), "--questions",
                                           str(questions), "--progress", "silent",
                                           *[a for s in extra for a in ("--set", s)]])
        runs[name] = out / "run"
        results[name] = numbers(out / "run" / "results.json")
        print(f"  wall {walls[name]:.1f} s, peak RSS {rss:.0f} MB ({load()})", flush=True)
    differ = [k for k in sorted(set(results["now"]) | set(results["before"]))
              if results["now"].get(k) != results["before"].get(k)]
    print(f"  demo wall now / before: {walls['now'] / walls['before']:.2f}; results.json "
          f"numbers identical: {not differ} (differing: {differ[:8]})")
    compare_runs(f"demo --questions {questions}", runs, cpu)


def numbers(path: Path) -> dict[str, Any]:
    """results.json flattened to dotted keys, without ``usage`` (latencies)."""
    out: dict[str, Any] = {}

    def walk(value: Any, prefix: str) -> None:
        if isinstance(value, dict):
            for k, v in value.items():
                if k != "usage":
                    walk(v, f"{prefix}.{k}" if prefix else k)
        else:
            out[prefix] = value
    walk(json.loads(path.read_text(encoding="utf-8")), "")
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--limit", type=int, default=6, help="testbed questions (x 4 states x 2)")
    ap.add_argument("--demo-questions", type=int, default=16)
    ap.add_argument("--skip-testbed", action="store_true")
    ap.add_argument("--skip-demo", action="store_true")
    ap.add_argument("--work", type=Path, help="keep the runs here (default: a temp folder)")
    args = ap.parse_args()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else "?"
    print(f"cores: {os.cpu_count()} (this process may use {cores}); {load()}")
    with tempfile.TemporaryDirectory() as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if not args.skip_testbed:
            if not (DATA / "README.md").exists():
                raise SystemExit(f"the testbed part needs the real data at {DATA}")
            testbed(work, args.limit)
        if not args.skip_demo:
            demo(work, args.demo_questions)
    print(f"end: {load()}")


if __name__ == "__main__":
    main()
