"""Start-up and the whole ``snapaudit analyze`` at 400 questions against scipy, in one run.

Issue 29: ``snapaudit --version`` and ``analyze`` on a 400-question file start in well under
0.5 s, and the whole analyze at n = 400 is at least 2x faster than ``scipy.stats.bootstrap``
alone (2 x 50,000 draws, one kernel, percentile; ``bench_analyze_scale.scipy_baseline``).

Each round runs, one after the other (interleaved, so a busy neighbour slows every figure):

- ``python -c pass`` (the interpreter alone);
- ``snapaudit --version`` (the CLI's own start: click, no numpy);
- ``python -c "import snapaudit.cli.analyze"`` (every module analyze needs, before any work);
- the whole ``snapaudit analyze`` CLI on the 400-question tables (4 states, r = 2, ladder,
  gold, labels; ``bench_analyze_scale.write_tables``), writing its results JSON;
- scipy's bare bootstrap at n = 400, in this process (``scipy_baseline``: the bootstrap call
  alone, scipy already imported), and the same as a child process (the interpreter, numpy's
  and ``scipy.stats``' imports and the call: what a script doing only that costs, the figure
  comparable with the whole CLI's).

Children run as the environment says (``PYTHONDONTWRITEBYTECODE=1`` makes every start compile
snapaudit's sources again); ``--pyc`` gives them a byte-code cache in a temporary folder
(warmed by a first untimed run), as an installed package has. Figures are the minimum and the
median of the rounds; the ratio is scipy's median over analyze's median.

Usage::

    python bench/bench_startup.py              # 7 rounds
    python bench/bench_startup.py --rounds 11 --pyc
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_analyze_scale import scipy_baseline, write_tables

ENTRY = "from snapaudit.cli import main; main()"  # as the console script: the program
BENCH = Path(__file__).resolve().parent


def _wall(cmd: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"{cmd} failed:\n{proc.stdout}\n{proc.stderr}")
    return wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--questions", type=int, default=400)
    ap.add_argument("--draws", type=int, default=50_000)
    ap.add_argument("--pyc", action="store_true",
                    help="children keep a byte-code cache (as an installed package)")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        paths = write_tables(folder, a.questions, 4, 2, 4, 1)
        env = dict(os.environ)
        if a.pyc:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(folder / "pycache")
        py = sys.executable
        analyze = [py, "-c", ENTRY, "analyze", "--answers", str(paths["answers"]),
                   "--labels", str(paths["labels"]), "--gold", str(paths["gold"]),
                   "--old", "n0", "--new", "n1", "--draws", str(a.draws),
                   "--json", str(folder / "results.json"), "--ladder", "n0,n1,n3,n7"]
        scipy_child = [py, "-c", f"import sys; sys.path.insert(0, {str(BENCH)!r}); from "
                       f"bench_analyze_scale import scipy_baseline; "
                       f"scipy_baseline({a.questions}, {a.draws})"]
        work = {"python -c pass": [py, "-c", "pass"],
                "snapaudit --version": [py, "-c", ENTRY, "--version"],
                "import snapaudit.cli.analyze": [py, "-c", "import snapaudit.cli.analyze"],
                f"snapaudit analyze (whole CLI, n = {a.questions})": analyze,
                "scipy's bootstrap as a child process (imports included)": scipy_child}
        _wall(analyze, env)  # warm the file cache (and the byte-code cache with --pyc)
        times: dict[str, list[float]] = {k: [] for k in [*work, "scipy"]}
        print(f"load average at start: {os.getloadavg()[0]:.2f}; byte code: "
              f"{'cached' if a.pyc else 'as the environment says'} "
              f"(PYTHONDONTWRITEBYTECODE={env.get('PYTHONDONTWRITEBYTECODE', '')!r})")
        for _ in range(a.rounds):
            for name, cmd in work.items():
                times[name].append(_wall(cmd, env))
            times["scipy"].append(scipy_baseline(a.questions, a.draws))
        print(f"\n| {a.rounds} rounds | min s | median s |\n|---|---|---|")
        for name, got in times.items():
            label = (f"scipy.stats.bootstrap alone, 2 x {a.draws:,} draws" if name == "scipy"
                     else f"`{name}`")
            print(f"| {label} | {min(got):.3f} | {statistics.median(got):.3f} |")
        whole = statistics.median(times[f"snapaudit analyze (whole CLI, n = {a.questions})"])
        child = statistics.median(times["scipy's bootstrap as a child process (imports included)"])
        print(f"\nscipy / analyze = {statistics.median(times['scipy']) / whole:.2f}x (the call "
              f"alone), {child / whole:.2f}x (scipy's process) (medians)")
        print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
