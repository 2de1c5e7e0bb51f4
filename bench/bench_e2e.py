"""End to end: ``snapaudit demo`` wall time, and ``snapaudit verify`` on a reference-size artifact.

1. ``snapaudit demo --out TMP`` (the embedded world on the local generator), timed as a
   subprocess, against ``snapaudit --help`` (interpreter start-up and CLI import) in the same run.
2. An artifact the size of the reference study (650 questions x 4 states x 2 repeats = 5,200
   answers; the rule judge labels every pair of a question's answers): the simulated demo
   world (``snapaudit.demo.simulate``, no model) is served by a loopback HTTP service in its
   own thread, ``snapaudit.engine.run_audit`` runs every stage with 50,000 bootstrap draws and
   ``snapaudit.artifact.export_artifact`` writes the artifact. Then ``snapaudit verify ART
   --gold GOLD`` is timed against ``snapaudit analyze`` of the artifact's own tables with the
   same settings (the recomputation verify cannot avoid). Usage::

       python bench/bench_e2e.py [--questions 650] [--repeat 3] [--skip-demo]
                                 [--demo-questions 16]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from aiohttp import web

from snapaudit.artifact import export_artifact
from snapaudit.demo.files import write_world
from snapaudit.demo.simulate import simulate_answers
from snapaudit.demo.world import build_world
from snapaudit.engine import run_audit
from snapaudit.progress import SilentProgress
from snapaudit.protocol import load_protocol

STATES = ("n0", "n1", "n3", "n7")
CLI = [str(Path(sys.executable).with_name("snapaudit"))]  # the console script beside python


class Service:
    """Serves ``POST /<state>`` with the simulated answer of (question id, state, repeat)."""

    def __init__(self, answers: dict[tuple[str, str, int], dict[str, Any]]):
        self.answers = answers
        self.loop = asyncio.new_event_loop()
        self.port = 0
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._runner: web.AppRunner | None = None

    async def _handle(self, request: web.Request) -> web.Response:
        body = await request.json()
        key = (body["qid"], request.match_info["state"], int(body["repeat"]))
        return web.json_response(self.answers[key])

    def _serve(self) -> None:
        asyncio.set_event_loop(self.loop)
        app = web.Application()
        app.router.add_post("/{state}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        self.loop.run_until_complete(self._runner.setup())
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", 0))
        self.loop.run_until_complete(web.SockSite(self._runner, sock).start())
        self.port = sock.getsockname()[1]
        self._ready.set()
        self.loop.run_forever()

    def __enter__(self) -> Service:
        self._thread.start()
        self._ready.wait(30)
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._runner is not None
        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self.loop).result(30)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(30)
        self.loop.close()


def protocol_text(world_dir: Path, port: int, n: int) -> str:
    systems = "".join(
        f'\n[systems.{s}]\nurl = "http://127.0.0.1:{port}/{s}"\n'
        'body_template = { question = "{question}", qid = "{question_id}", '
        'repeat = "{repeat}" }\n' for s in STATES)
    return f"""name = "bench-e2e"
[states]
order = ["n0", "n1", "n3", "n7"]
old = "n1"
new = "n7"
[design]
repeats = 2
[cohort]
source = "jsonl"
path = "{world_dir.as_posix()}/questions.jsonl"
size = {n}
[gold]
path = "{world_dir.as_posix()}/gold.jsonl"
format = "jsonl"
[system]
kind = "http"
[judge]
kind = "rule"
name = "rule"
[bootstrap]
draws = 50000
seed = 1
[run]
concurrency = 64
max_attempts = 2
{systems}"""


def build_artifact(root: Path, n: int) -> tuple[Path, Path, float]:
    """A finished run of ``n`` questions exported as an artifact; (artifact, gold, seconds)."""
    t0 = time.perf_counter()
    world = build_world(n, seed=5)
    files = write_world(world, root / "world")
    served = {(r.question_id, r.state, r.repeat):
              {"answer": r.answer, "doc_ids": list(r.doc_ids) if r.doc_ids is not None else None}
              for r in simulate_answers(world, seed=2)}
    with Service(served) as service:
        path = root / "protocol.toml"
        path.write_text(protocol_text(files.root, service.port, n), encoding="utf-8")
        run_audit(load_protocol(path), root / "run", base_dir=root, progress=SilentProgress())
    art = export_artifact(root / "run", root / "artifact")
    return art, files.gold, time.perf_counter() - t0


def timed(cmd: list[str], repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - t0)
    return best


def lines(path: Path) -> int:
    with open(path, encoding="utf-8") as fh:
        return sum(1 for line in fh if line.strip())


def main() -> None:
    ap = argparse.ArgumentParser(description="demo wall time; verify on a reference-size artifact")
    ap.add_argument("--questions", type=int, default=650)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--skip-demo", action="store_true")
    ap.add_argument("--demo-questions", type=int, default=16, help="the demo's --questions")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        t_help = timed([*CLI, "--help"], args.repeat)
        print("| what | wall s | x baseline |\n|---|---|---|")
        print(f"| `snapaudit --help` (baseline: start-up) | {t_help:.2f} | 1.0 |")
        if not args.skip_demo:
            t0 = time.perf_counter()
            subprocess.run([*CLI, "demo", "--out", str(root / "demo"), "--questions",
                            str(args.demo_questions), "--progress", "plain"],
                           check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            t_demo = time.perf_counter() - t0
            print(f"| `snapaudit demo --questions {args.demo_questions}` (cold) | {t_demo:.1f} | "
                  f"{t_demo / t_help:.0f} |")
            shutil.rmtree(root / "demo")
        art, gold, t_build = build_artifact(root, args.questions)
        answers, labels = art / "tables" / "answers.jsonl", art / "tables" / "labels.jsonl"
        results = json.loads((art / "results.json").read_text(encoding="utf-8"))
        t_verify = timed([*CLI, "verify", str(art), "--gold", str(gold)], args.repeat)
        t_analyze = timed([*CLI, "analyze", "--answers", str(answers), "--labels", str(labels),
                           "--gold", str(gold), "--old", "n1", "--new", "n7",
                           "--ladder", ",".join(STATES), "--draws", "50000", "--seed", "1",
                           "--judge", "rule"], args.repeat)
        print(f"| `snapaudit analyze` of the artifact's tables (baseline) | {t_analyze:.2f} | "
              "1.0 |")
        print(f"| `snapaudit verify ART --gold` | {t_verify:.2f} | {t_verify / t_analyze:.2f} |")
        print(f"\nartifact: {lines(answers):,} answers, {lines(labels):,} judge labels, "
              f"{results['comparison']['draws']:,} draws; built (engine run + export) in "
              f"{t_build:.0f} s; verify and analyze: best of {args.repeat}")


if __name__ == "__main__":
    main()
