"""What a command imports before it works: nothing it does not use."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import snapaudit
from tests.helpers.cli import snapaudit as run_snapaudit

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"


def _modules_after(*argv: str) -> set[str]:
    code = ("import json, sys\nfrom snapaudit.cli import main\n"
            "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
            "sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)))\n")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    res = subprocess.run([sys.executable, "-c", code, *argv], env=env, capture_output=True,
                         text=True, timeout=300, check=False)
    return set(json.loads(res.stderr.rpartition("MODULES ")[2]))


def test_version_is_the_package_version(tmp_path: Path) -> None:
    res = run_snapaudit("--version", cwd=tmp_path)
    assert res.returncode == 0
    assert res.stdout.strip().endswith(f"version {snapaudit.__version__}")


def test_version_needs_no_package_metadata_nor_numpy() -> None:
    loaded = _modules_after("--version")
    assert "importlib.metadata" not in loaded and "numpy" not in loaded


@pytest.mark.slow
def test_analyze_of_a_small_table_imports_neither_pyarrow_nor_scipy(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    loaded = _modules_after("analyze", "--answers", str(EXAMPLES / "answers.jsonl"),
                            "--labels", str(EXAMPLES / "labels.jsonl"), "--gold",
                            str(EXAMPLES / "gold.jsonl"), "--old", "n0", "--new", "n1",
                            "--json", str(out))
    assert json.loads(out.read_text(encoding="utf-8"))["comparison"]["questions"] == 240
    assert "pyarrow" not in loaded and "scipy" not in loaded
    assert "snapaudit.stats.analysis" in loaded


def _modules_after_import(module: str) -> set[str]:
    code = f"import json, sys\nimport {module}\nprint(json.dumps(sorted(sys.modules)))\n"
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    res = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=300, check=True)
    return set(json.loads(res.stdout))


def test_version_imports_no_numerics_no_validation_no_ledger() -> None:
    loaded = _modules_after("--version")
    assert not {"numpy", "pyarrow", "pydantic", "sqlite3", "snapaudit.tables",
                "snapaudit.systems.redact"} & loaded


def test_importing_the_analyze_command_leaves_out_what_only_its_work_or_big_files_need() -> None:
    loaded = _modules_after_import("snapaudit.cli.analyze")
    assert "snapaudit.stats.analysis" in loaded  # the import did happen
    # numpy.ma: numpy.percentile's first call imports it (stats.bootstrap.percentiles does without);
    # pyarrow: only a file big enough for the fast reader; the summary: once a result exists
    assert not {"numpy.ma", "pyarrow", "scipy", "snapaudit.report.summary", "sqlite3"} & loaded


@pytest.mark.slow
def test_analyze_of_a_small_table_never_imports_numpy_ma_nor_the_ledger(tmp_path: Path) -> None:
    out = tmp_path / "results.json"
    loaded = _modules_after("analyze", "--answers", str(EXAMPLES / "answers.jsonl"),
                            "--labels", str(EXAMPLES / "labels.jsonl"), "--gold",
                            str(EXAMPLES / "gold.jsonl"), "--old", "n0", "--new", "n1",
                            "--ladder", "n0,n1,n3,n7", "--json", str(out))
    assert json.loads(out.read_text(encoding="utf-8"))["ladder"] is not None
    assert "snapaudit.report.summary" in loaded
    assert not {"numpy.ma", "pyarrow", "sqlite3"} & loaded


def _at_exit(expression: str, call: str, *argv: str, unset: tuple[str, ...] = (),
             **env_set: str) -> str:
    """What ``expression`` is at the interpreter's exit in a child that runs ``call`` (the
    environment less ``unset``, plus ``env_set``)."""
    code = ("import atexit, gc, os, sys\n"
            f"atexit.register(lambda: sys.stderr.write('\\nAT-EXIT ' + str({expression})))\n"
            f"from snapaudit.cli import main\n{call}\n")
    env = {k: v for k, v in os.environ.items() if k not in unset}
    env.update(PYTHONPATH=str(REPO / "src"), **env_set)
    res = subprocess.run([sys.executable, "-c", code, *argv], env=env, capture_output=True,
                         text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stderr
    return res.stderr.rpartition("AT-EXIT ")[2].strip()


def _freeze_count_at_exit(call: str, *argv: str) -> int:
    return int(_at_exit("gc.get_freeze_count()", call, *argv))


def test_the_program_leaves_its_objects_out_of_the_shutdown_collections() -> None:
    assert _freeze_count_at_exit("main()", "--version") > 1000  # the console script's call
    # a caller that passes argv keeps its collector as it was
    assert _freeze_count_at_exit("main(['--version'])") == 0
    # a command that may hold a ledger at its end leaves shutdown as it was
    assert _freeze_count_at_exit("main()", "init", "--help") == 0


def test_analyze_run_as_the_program_is_frozen_at_exit(tmp_path: Path) -> None:
    assert _freeze_count_at_exit(
        "main()", "analyze", "--answers", str(EXAMPLES / "answers.jsonl"), "--old", "n0",
        "--new", "n1", "--json", str(tmp_path / "results.json")) > 10_000
    assert (tmp_path / "results.json").stat().st_size > 1000


def _blas_threads_at_exit(call: str, *argv: str, **env_set: str) -> str | None:
    value = _at_exit("os.environ.get('OPENBLAS_NUM_THREADS', '-')", call, *argv,
                     unset=("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"), **env_set)
    return None if value == "-" else value


def test_the_program_runs_blas_on_one_thread_for_the_analysis_commands(tmp_path: Path) -> None:
    one, two = tmp_path / "one.json", tmp_path / "two.json"
    analyze = ("analyze", "--answers", str(EXAMPLES / "answers.jsonl"), "--labels",
               str(EXAMPLES / "labels.jsonl"), "--gold", str(EXAMPLES / "gold.jsonl"),
               "--old", "n0", "--new", "n1", "--json")
    assert _blas_threads_at_exit("main()", *analyze, str(one)) == "1"
    # the user's own setting is kept, and the results do not depend on it
    assert _blas_threads_at_exit("main()", *analyze, str(two), OPENBLAS_NUM_THREADS="2") == "2"
    assert one.read_bytes() == two.read_bytes()
    # a command that may load the user's system or a model, and a caller that passes argv
    assert _blas_threads_at_exit("main()", "init", "--help") is None
    assert _blas_threads_at_exit("main(['analyze', '--help'])") is None
