"""End to end: ``snapaudit demo`` wall time, and ``snapaudit verify`` on a reference-size artifact.

1. ``snapaudit demo --out TMP`` (the embedded world on the local generator), timed as a
   subprocess, against ``snapaudit --help`` (interpreter start-up and CLI import) in the same run.
2. An artifact the size of the reference study (650 questions x 4 states x 2 repeats = 5,200
   answers; the rule judge labels every pair of a question's answers): the simulated demo
   world (``snapaudit.demo.simulate``, no model) is served by a loopback HTTP service in its
   own thread, ``snapaudit.run.engine.run_audit`` runs every stage with 50,000 bootstrap draws and
   ``snapaudit.artifact.export.export_artifact`` writes the artifact. Then ``snapaudit verify ART
   --gold GOLD`` is timed against ``snapaudit analyze`` of the artifact's own tables with the
   same settings (the recomputation verify cannot avoid). Usage::

       python bench/bench_e2e.py [--questions 650] [--repeat 3] [--skip-demo]
                                 [--demo-questions 16]
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests.fakes

from tests.fakes.world_service import STATES, RunSettings, engine_run

from snapaudit.artifact.export import export_artifact

CLI = [str(Path(sys.executable).with_name("snapaudit"))]  # the console script beside python


def build_artifact(root: Path, n: int) -> tuple[Path, Path, float]:
    """A finished run of ``n`` questions exported as an artifact; (artifact, gold, seconds)."""
    t0 = time.perf_counter()
    run_dir = engine_run(root, n, RunSettings(name="bench-e2e", draws=50_000, concurrency=64))
    art = export_artifact(run_dir, root / "artifact")
    return art, root / "world" / "gold.jsonl", time.perf_counter() - t0


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
