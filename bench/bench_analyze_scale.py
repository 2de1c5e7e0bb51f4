"""Wall time and peak memory of the whole ``snapaudit analyze`` at 10^4 and 10^5 questions.

The script writes its own tables (seeded): answers (with doc ids and question text), pair
labels of one or two judges for every pair of the labelled states, and gold. Each question has
a few candidate facts and paraphrases; a judge labels two answers the same when they give the
same fact, with a little seeded noise, so the labels are not transitive everywhere.

It then runs, in one run, ``--rounds`` rounds (default 3) of, one after the other:

- ``snapaudit analyze`` as the CLI runs it (reading, validation, kernels, bootstrap, gate,
  every diagnostic, the results JSON), in a child process whose peak RSS is read from
  ``os.wait4``;
- the baseline: ``scipy.stats.bootstrap`` (percentile, paired, vectorized, batch ~10M indices)
  of the per-question D_i of the two kernels, 2 x 50,000 draws, at the same n, in a fresh
  child process (``--scipy-child``), timed as that process's first call (scipy's lazy loads
  included) and again warm.

The two alternate, so a slower minute of a shared machine slows both; each round's ratio is
printed, and the ratio of the medians over the rounds.

``--format parquet`` (or ``both``) also writes the tables as Parquet (converted from the JSONL
by pyarrow) and times analyze on them; ``--baseline SRC`` also times, in each round, the
package found in the source folder SRC (e.g. a worktree of an older commit) on the JSONL
tables. Every analyze of a run must write the same results.json bytes (the script fails
otherwise), and the medians of each are printed with their ratio to the first.

Usage::

    python bench/bench_analyze_scale.py                       # 10,000 q, 4 states, r = 2
    python bench/bench_analyze_scale.py --questions 400 --pyc # with a byte-code cache
    python bench/bench_analyze_scale.py --questions 100000 --states 4 --repeats 5 \\
        --labelled 2 --judges 2 --skip-scipy
    python bench/bench_analyze_scale.py --format both --baseline /tmp/tables-base/src \\
        --skip-scipy --rounds 5                                   # before/after, JSONL/Parquet
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

import numpy as np

STATES = ("n0", "n1", "n3", "n7")
FACTS = ("Paris", "London", "Berlin", "Madrid", "Rome", "Vienna", "Oslo", "Lisbon")


def write_tables(folder: Path, n: int, states: int, r: int, labelled: int, judges: int,
                 seed: int = 0) -> dict[str, Path]:
    """answers.jsonl, labels.jsonl, gold.jsonl; returns their paths. Fast (no json.dumps)."""
    rng = np.random.default_rng(seed)
    names = STATES[:states]
    # per question and state: the fact each repeat gives (stable, noisy or flipping)
    base = rng.integers(0, len(FACTS), size=n)
    kind = rng.choice(4, size=n, p=[0.6, 0.25, 0.1, 0.05])
    facts = np.repeat(base[:, None, None], states, axis=1).repeat(r, axis=2)
    noisy = rng.integers(0, len(FACTS), size=facts.shape)
    mask = (kind == 1)[:, None, None] & (rng.random(facts.shape) < 0.3)
    facts = np.where(mask, noisy, facts)
    flip = kind == 2
    facts[flip, states // 2:, :] = (facts[flip, states // 2:, :] + 1) % len(FACTS)
    para = rng.random(facts.shape) < 0.15
    paths = {k: folder / f"{k}.jsonl" for k in ("answers", "labels", "gold")}
    with open(paths["answers"], "w", encoding="utf-8") as f:
        for q in range(n):
            qid = f"q{q:07d}"
            docs = [f"d{(q * 7 + k) % 50_000}" for k in range(5)]
            for s, state in enumerate(names):
                shift = s * int(kind[q] >= 2)
                doc = ", ".join(f'"{d}{"x" if k < shift else ""}"' for k, d in enumerate(docs))
                for j in range(r):
                    fact = FACTS[facts[q, s, j]]
                    ans = f"The answer is {fact}." if para[q, s, j] else fact
                    f.write(f'{{"question_id": "{qid}", "state": "{state}", "repeat": {j + 1}, '
                            f'"answer": "{ans}", "doc_ids": [{doc}], '
                            f'"question": "Where is item {q}?"}}\n')
    refs = [(s, j) for s in range(labelled) for j in range(r)]
    pairs = [(a, b) for i, a in enumerate(refs) for b in refs[i + 1:]]
    noise = rng.random((judges, n, len(pairs))) < 0.02
    with open(paths["labels"], "w", encoding="utf-8") as f:
        for jd in range(judges):
            judge = "default" if jd == 0 else f"judge{jd}"
            for q in range(n):
                qid = f"q{q:07d}"
                for p, ((sa, ja), (sb, jb)) in enumerate(pairs):
                    same = (facts[q, sa, ja] == facts[q, sb, jb]) != noise[jd, q, p]
                    f.write(f'{{"question_id": "{qid}", "a": {{"state": "{names[sa]}", '
                            f'"repeat": {ja + 1}}}, "b": {{"state": "{names[sb]}", '
                            f'"repeat": {jb + 1}}}, "same": {"true" if same else "false"}, '
                            f'"judge": "{judge}"}}\n')
    with open(paths["gold"], "w", encoding="utf-8") as f:
        for q in range(n):
            f.write(f'{{"question_id": "q{q:07d}", "answers": ["{FACTS[base[q]]}", '
                    f'"the {FACTS[base[q]]}"]}}\n')
    return paths


def write_parquet(paths: dict[str, Path], folder: Path | None = None) -> dict[str, Path]:
    """The same tables as Parquet, beside the JSONL or in ``folder``, written by a child
    process (a child's peak RSS counts its parent's at the fork: this one stays small)."""
    out = {name: (folder or path.parent) / f"{name}.parquet" for name, path in paths.items()}
    args = [str(x) for name in paths for x in (name, paths[name], out[name])]
    subprocess.run([sys.executable, __file__, "--parquet-child", *args], check=True)
    return out


def parquet_child(args: list[str]) -> None:
    """Each (table, JSONL path, Parquet path) of ``args``: pyarrow reads the JSONL with the
    table's schema and writes the Parquet."""
    import pyarrow as pa
    import pyarrow.json as pj
    import pyarrow.parquet as pq

    ref = pa.struct([("state", pa.string()), ("repeat", pa.int64())])
    schemas = {"answers": [("question_id", pa.string()), ("state", pa.string()),
                           ("repeat", pa.int64()), ("answer", pa.string()),
                           ("doc_ids", pa.list_(pa.string())), ("question", pa.string())],
               "labels": [("question_id", pa.string()), ("a", ref), ("b", ref),
                          ("same", pa.bool_()), ("judge", pa.string())],
               "gold": [("question_id", pa.string()), ("answers", pa.list_(pa.string()))]}
    for name, source, target in zip(args[::3], args[1::3], args[2::3], strict=True):
        options = pj.ParseOptions(explicit_schema=pa.schema(schemas[name]))
        pq.write_table(pj.read_json(source, parse_options=options), target, compression="zstd")


def scipy_baseline(n: int, draws: int, seed: int = 1) -> float:
    """Seconds of scipy.stats.bootstrap's 2 x ``draws`` on r = 2 per-question D_i."""
    import scipy.stats

    rng = np.random.default_rng(seed)
    levels = np.array([-0.5, -0.25, 0.0, 0.25, 0.5, 0.75, 1.0])
    exact = rng.choice(levels, size=n, p=[.03, .07, .6, .1, .08, .02, .1])
    semantic = np.clip(exact + rng.choice([-0.25, 0.0, 0.25], size=n, p=[.1, .7, .2]), -1, 1)

    def both(x: np.ndarray, y: np.ndarray, axis: int = -1) -> np.ndarray:
        return np.stack([x.mean(axis=axis), y.mean(axis=axis)])

    t0 = time.perf_counter()
    scipy.stats.bootstrap((exact, semantic), both, paired=True, vectorized=True,
                          n_resamples=draws, batch=max(1, 10_000_000 // n),
                          method="percentile", rng=np.random.default_rng(seed))
    return time.perf_counter() - t0


def scipy_child(n: int, draws: int) -> tuple[float, float]:
    """(first call, warm call) seconds of :func:`scipy_baseline` in a fresh child process."""
    cmd = [sys.executable, __file__, "--scipy-child", "--questions", str(n), "--draws",
           str(draws)]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split()
    return float(out[-2]), float(out[-1])


def decoders(path: Path, lines: int) -> None:
    """CPU seconds (all threads) to decode the first ``lines`` label lines with each JSON
    decoder installed (a shared machine's wall time says little)."""
    import importlib
    import json

    import msgspec

    from snapaudit.tables.jsonl import label_line

    with open(path, "rb") as f:
        raw = [next(f) for _ in range(lines)]
    sample = path.with_suffix(".sample.jsonl")
    sample.write_bytes(b"".join(raw))
    typed = msgspec.json.Decoder(label_line())
    runs = {"json (stdlib), per line": lambda: [json.loads(x) for x in raw],
            "msgspec, typed LabelLine, decode_lines (the readers')":
                lambda: typed.decode_lines(b"".join(raw))}
    for name in ("orjson", "msgspec"):
        try:
            mod = importlib.import_module(name)
        except ImportError:
            continue
        decode = mod.loads if name == "orjson" else mod.json.Decoder().decode
        runs[f"{name}, per line, dicts"] = lambda d=decode: [d(x) for x in raw]
    import pyarrow.json as pj

    runs["pyarrow.json.read_json (columns)"] = lambda: pj.read_json(sample)
    timings = {}
    for name, run in runs.items():
        t0 = time.process_time()
        run()
        timings[name] = time.process_time() - t0
    base = timings["json (stdlib), per line"]
    print(f"\n| decoder ({lines:,} label lines) | CPU seconds | vs stdlib |\n|---|---|---|")
    for name, sec in timings.items():
        print(f"| {name} | {sec:.2f} | {base / sec:.1f}x |")


def run_analyze(paths: dict[str, Path], states: int, out: Path, draws: int,
                ladder: bool, env: dict[str, str] | None = None) -> tuple[float, float]:
    """(seconds, peak RSS in MiB) of the CLI ``snapaudit analyze`` in a child process
    (``env``: its environment, default this one's)."""
    names = STATES[:states]
    # main() as the console script calls it (the program: argv from the command line)
    cmd = [sys.executable, "-c", "from snapaudit.cli import main; main()",
           "analyze", "--answers", str(paths["answers"]),
           "--labels", str(paths["labels"]), "--gold", str(paths["gold"]), "--old", names[0],
           "--new", names[1], "--draws", str(draws), "--json", str(out)]
    if ladder:  # the semantic ladder needs labels for every state
        cmd += ["--ladder", ",".join(names)]
    with tempfile.TemporaryFile() as log:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log, env=env)
        _, status, usage = os.wait4(proc.pid, 0)  # this child's own peak, not the baseline's
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(status)  # reaped: Popen must not wait
        if proc.returncode != 0:
            log.seek(0)
            raise SystemExit(f"analyze failed:\n{log.read().decode(errors='replace')}")
    return wall, usage.ru_maxrss / 1024


Variant = tuple[str, dict[str, Path], dict[str, str]]  # name, tables, environment


def report(names: list[str],
           rounds: list[tuple[list[tuple[float, float]], float, float, float]], draws: int,
           skip_scipy: bool) -> None:
    """Each round's seconds, then each analyze's median (ratio to the first) and the ratio of
    the medians to scipy's."""
    print("\n| round | " + " | ".join(f"{n} s" for n in names)
          + " | scipy first call s | scipy warm s | load avg |\n|---|"
          + "---|" * (len(names) + 3))
    for i, (runs, first, warm, load) in enumerate(rounds, 1):
        print(f"| {i} | " + " | ".join(f"{w:.2f}" for w, _ in runs)
              + f" | {first:.2f} | {warm:.2f} | {load:.2f} |")
    first, warm = (statistics.median(r[k] for r in rounds) for k in (1, 2))
    print(f"\n| analyze (median of {len(rounds)}) | seconds | min-max | peak RSS MiB | "
          f"vs {names[0]} |\n|---|---|---|---|---|")
    medians = []
    for k, name in enumerate(names):
        walls = [r[0][k][0] for r in rounds]
        medians.append(statistics.median(walls))
        peak = statistics.median(r[0][k][1] for r in rounds)
        print(f"| {name} | {medians[-1]:.2f} | {min(walls):.2f}-{max(walls):.2f} | {peak:.0f} "
              f"| {medians[-1] / medians[0]:.2f}x |")
    if not skip_scipy:
        print(f"\nscipy.stats.bootstrap, 2 x {draws:,} draws: first call {first:.2f} s, warm "
              f"{warm:.2f} s (medians)")
        for name, wall in zip(names, medians, strict=True):
            print(f"scipy / analyze ({name}) = {first / wall:.2f}x (the first call), "
                  f"{warm / wall:.2f}x (the warm call)")


def _count_lines(path: Path) -> int:
    with open(path, "rb") as f:
        return sum(1 for _ in f)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=10_000)
    ap.add_argument("--states", type=int, default=4)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--labelled", type=int, default=4, help="states whose pairs are labelled")
    ap.add_argument("--judges", type=int, default=1)
    ap.add_argument("--draws", type=int, default=50_000)
    ap.add_argument("--skip-scipy", action="store_true")
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternating rounds of analyze and the baseline (medians reported)")
    ap.add_argument("--scipy-child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--parquet-child", nargs="+", help=argparse.SUPPRESS)
    ap.add_argument("--keep", type=Path, help="write the tables here and keep them")
    ap.add_argument("--reuse", action="store_true",
                    help="with --keep: read the tables already there (same arguments as "
                         "the run that wrote them)")
    ap.add_argument("--format", choices=["jsonl", "parquet", "both"], default="jsonl",
                    help="the tables analyze reads (parquet: converted from the JSONL)")
    ap.add_argument("--baseline", type=Path, metavar="SRC",
                    help="also time the package in this source folder on the JSONL tables")
    ap.add_argument("--decoders", type=int, default=0, metavar="LINES",
                    help="also time the JSON decoders on this many label lines")
    ap.add_argument("--pyc", action="store_true",
                    help="give analyze a byte-code cache in a temporary folder, warmed by a "
                         "first untimed run, as an installed package has (this machine sets "
                         "PYTHONDONTWRITEBYTECODE=1: every start compiles the sources again)")
    a = ap.parse_args()
    if a.parquet_child:
        parquet_child(a.parquet_child)
        return
    if a.scipy_child:  # one baseline process: its first call, then a warm one
        print(scipy_baseline(a.questions, a.draws), scipy_baseline(a.questions, a.draws))
        return
    with tempfile.TemporaryDirectory() as tmp:
        folder = a.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        paths = {k: folder / f"{k}.jsonl" for k in ("answers", "labels", "gold")}
        if not (a.reuse and all(p.exists() for p in paths.values())):
            paths = write_tables(folder, a.questions, a.states, a.repeats, a.labelled, a.judges)
        gen = time.perf_counter() - t0
        rows, labels = (_count_lines(paths[k]) for k in ("answers", "labels"))
        print(f"load average at start: {os.getloadavg()[0]:.2f} (2 cores shared)")
        print(f"tables: {a.questions:,} questions, {a.states} states, r = {a.repeats}: "
              f"{rows:,} answers, {labels:,} labels ({a.judges} judge(s)), written in {gen:.1f} s")
        env = dict(os.environ)
        ladder = a.states > 2 and a.labelled == a.states
        if a.pyc:
            env.pop("PYTHONDONTWRITEBYTECODE", None)
            env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        variants: list[Variant] = []
        if a.baseline:
            variants.append((f"baseline {a.baseline} (jsonl)", paths,
                             {**env, "PYTHONPATH": str(a.baseline)}))
        if a.format in ("jsonl", "both"):
            variants.append(("jsonl", paths, env))
        if a.format in ("parquet", "both"):
            t0 = time.perf_counter()
            parquet = {k: p.with_suffix(".parquet") for k, p in paths.items()}
            if not (a.reuse and all(p.exists() for p in parquet.values())):
                parquet = write_parquet(paths)
            variants.append(("parquet", parquet, env))
            print(f"parquet tables written in {time.perf_counter() - t0:.1f} s")
        outs = [folder / f"results-{k}.json" for k in range(len(variants))]
        if a.pyc:  # one untimed run each fills the byte-code cache
            for (_, tables, venv), out in zip(variants, outs, strict=True):
                run_analyze(tables, a.states, out, a.draws, ladder, venv)
        rounds = []
        for _ in range(max(1, a.rounds)):
            load = os.getloadavg()[0]
            runs = [run_analyze(tables, a.states, out, a.draws, ladder, venv)
                    for (_, tables, venv), out in zip(variants, outs, strict=True)]
            base = (float("nan"),) * 2 if a.skip_scipy else scipy_child(a.questions, a.draws)
            rounds.append((runs, *base, load))
        print(f"byte code: {'cached (--pyc)' if a.pyc else 'as the environment says'} "
              f"(PYTHONDONTWRITEBYTECODE={env.get('PYTHONDONTWRITEBYTECODE', '')!r})")
        report([name for name, _, _ in variants], rounds, a.draws, a.skip_scipy)
        same = all(out.read_bytes() == outs[0].read_bytes() for out in outs)
        print(f"results.json of every analyze byte-identical: {same}")
        if not same:
            raise SystemExit("the analyses' results.json differ")
        if a.decoders:
            decoders(paths["labels"], min(a.decoders, labels))
        print(f"load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
