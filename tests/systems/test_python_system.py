"""``system.kind = "python"``: the example pipeline end to end, retries of a raising
callable, resume after SIGKILL, the code bound into the spec, and ``snapaudit.audit()``."""

from __future__ import annotations

import json
import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

import snapaudit
from snapaudit.errors import ConfigError, SnapauditError, TransportInvalid
from snapaudit.hashing import sha256_text
from snapaudit.systems.python import code_identity, load_target, to_outcome
from tests.helpers.cli import run_cli
from tests.helpers.ledger_view import accepted, query
from tests.helpers.protocol import python_protocol_text, save_protocol, write_world

REPO = Path(__file__).resolve().parents[2]
EXAMPLE = REPO / "examples" / "python_system"


def _protocol(tmp: Path, target: str, kwargs: dict[str, str] | None = None,
              max_attempts: int = 4) -> Path:
    kw = "{ " + ", ".join(f'{k} = "{v}"' for k, v in (kwargs or {}).items()) + " }"
    return save_protocol(tmp, python_protocol_text(f'target = "{target}"\nkwargs = {kw}',
                                                   max_attempts=max_attempts))


def test_example_pipeline_end_to_end_with_the_python_api(tmp_path: Path) -> None:
    result = snapaudit.audit(EXAMPLE / "audit.toml", tmp_path / "run")
    assert isinstance(result, snapaudit.AnalysisResult)
    # 3 of 12 facts were updated in passages_v2: those questions churn completely
    # (within 1, cross 0), the other 9 not at all: D = 3/12 = 25 pp in both kernels
    assert result.kernels["exact"].d_hat == pytest.approx(25.0)
    assert result.kernels["semantic"].d_hat == pytest.approx(25.0)
    assert result.gate.verdict == "incompatible"
    assert result.comparison.states == ("old", "new")
    on_disk = json.loads((tmp_path / "run" / "results.json").read_text())
    assert on_disk["kernels"]["exact"]["d_hat"] == pytest.approx(25.0)
    rows = [json.loads(line) for line in
            (tmp_path / "run" / "tables" / "answers.jsonl").read_text().splitlines()]
    assert len(rows) == 12 * 2 * 2 and all(r["doc_ids"] for r in rows)


def test_raising_callable_is_retried_and_reported(tmp_path: Path) -> None:
    write_world(tmp_path, n=6)
    proto = _protocol(tmp_path, "tests.fakes.python_systems:flaky")
    result = snapaudit.audit(proto, tmp_path / "run")
    db = tmp_path / "run" / "ledger.sqlite"
    assert len(accepted(db)) == 6 * 2 * 2
    failed = query(db, "SELECT cell_key, reason, error FROM attempts "
                       "WHERE stage='answer' AND outcome='transport_invalid'")
    # questions q000, q002, q004 fail their first attempt in every (state, repeat)
    assert sorted({k for k, _, _ in failed}) == sorted(
        f"q00{i}|{s}|{r}" for i in (0, 2, 4) for s in ("old", "new") for r in (1, 2))
    assert {reason for _, reason, _ in failed} == {"exception"}
    assert all("RuntimeError: index shard offline for q00" in str(err) for _, _, err in failed)
    assert result.kernels["exact"].d_hat == pytest.approx(100.0)


def test_callable_that_always_raises_exhausts_its_retries_with_the_reason(
        tmp_path: Path) -> None:
    write_world(tmp_path, n=6)
    proto = _protocol(tmp_path, "tests.fakes.python_systems:always_fails", max_attempts=2)
    # every cell exhausts its retries (or the run stops early on one identical failure)
    with pytest.raises(SnapauditError):
        snapaudit.audit(proto, tmp_path / "run")
    errors = query(tmp_path / "run" / "ledger.sqlite",
                   "SELECT DISTINCT error FROM attempts WHERE stage='answer' "
                   "AND reason='exception'")
    assert errors == [("ValueError: bad credentials for the vector store",)]
    assert 0 < len(query(tmp_path / "run" / "ledger.sqlite", "SELECT id FROM attempts")) <= 48


def test_async_callable_and_kwargs(tmp_path: Path) -> None:
    write_world(tmp_path, n=6)
    proto = _protocol(tmp_path, "tests.fakes.python_systems:async_answer", {"suffix": "!"})
    result = snapaudit.audit(proto, tmp_path / "run")
    assert result.kernels["exact"].d_hat == pytest.approx(0.0)
    payloads = [json.loads(p) for _, p in accepted(tmp_path / "run" / "ledger.sqlite").values()]
    assert {p["answer"] for p in payloads} == {f"answer q00{i}!" for i in range(6)}


def test_bad_targets_are_config_errors_and_returns_are_validated() -> None:
    with pytest.raises(ConfigError, match="cannot import 'no_such_module_xyz'"):
        load_target("no_such_module_xyz:f")
    with pytest.raises(ConfigError, match="has no 'nope'"):
        load_target("tests.fakes.python_systems:nope")
    assert to_outcome("Paris", 0.1).answer == "Paris"
    out = to_outcome({"answer": "Paris", "doc_ids": [1, "d2"], "meta": {"m": 1}}, 0.0)
    assert (out.doc_ids, out.meta) == (("1", "d2"), {"m": 1})
    for bad in ({"text": "x"}, {"answer": 3}, ["Paris"], {"answer": "x", "doc_ids": "d1"}):
        with pytest.raises(TransportInvalid, match="schema"):
            to_outcome(bad, 0.0)


def test_document_texts_become_content_hashes_one_per_id() -> None:
    out = to_outcome({"answer": "A", "doc_ids": ["d1", "d2"], "doc_texts": ["x", "y"]}, 0.0)
    assert out.doc_hashes == (sha256_text("x"), sha256_text("y"))
    assert to_outcome({"answer": "A", "doc_ids": ["d1"]}, 0.0).doc_hashes is None
    for bad, why in (({"answer": "A", "doc_ids": ["d1"], "doc_texts": ["x", "y"]},
                      "'doc_texts' holds 2 text(s) for 1 doc id(s)"),
                     ({"answer": "A", "doc_texts": ["x"]}, "holds 1 text(s) for 0 doc id"),
                     ({"answer": "A", "doc_ids": ["d1"], "doc_texts": [3]},
                      "'doc_texts' must be a list of strings")):
        with pytest.raises(TransportInvalid, match="schema") as err:
            to_outcome(bad, 0.0)
        assert why in str(err.value.detail)


def test_the_target_source_is_bound_into_the_spec(tmp_path: Path) -> None:
    mod = tmp_path / "mypipe_bound.py"
    mod.write_text("def answer(call):\n    return 'a'\n", encoding="utf-8")
    load_target("mypipe_bound:answer", tmp_path)
    first = code_identity("mypipe_bound:answer")
    import hashlib

    assert first == {"module": "mypipe_bound",
                     "source_sha256": hashlib.sha256(mod.read_bytes()).hexdigest()}
    dist = code_identity("pydantic:BaseModel")  # an installed distribution: name + version
    assert dist["distribution"] == "pydantic" and dist["version"]


def _cli(proto: Path, run_dir: Path, *sets: str) -> subprocess.Popen[bytes]:
    return run_cli(proto, run_dir, *[a for s in sets for a in ("--set", s)])


@pytest.mark.slow
def test_example_resumes_after_sigkill(tmp_path: Path) -> None:
    example = tmp_path / "example"
    shutil.copytree(EXAMPLE, example)
    run_dir = tmp_path / "run"
    slow = ("systems.old.kwargs.delay_s=0.05", "systems.new.kwargs.delay_s=0.05",
            "run.concurrency=1")
    proc = _cli(example / "audit.toml", run_dir, *slow)
    db = run_dir / "ledger.sqlite"
    deadline = time.monotonic() + 60
    seen: dict[str, Any] = {}
    while proc.poll() is None and time.monotonic() < deadline:
        try:
            seen = accepted(db) if db.exists() else {}
        except sqlite3.Error:  # the schema may not exist yet
            seen = {}
        if len(seen) >= 8:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert proc.stderr is not None
    proc.stderr.close()
    assert 8 <= len(seen) < 48, "killed mid-stage"
    final = _cli(example / "audit.toml", run_dir, *slow)
    _, err = final.communicate(timeout=120)
    assert final.returncode == 0, err.decode()
    cells = accepted(db)
    assert len(cells) == 48 and all(cells[k] == v for k, v in seen.items())
    results = json.loads((run_dir / "results.json").read_text())
    assert results["kernels"]["exact"]["d_hat"] == pytest.approx(25.0)


@pytest.mark.parametrize("pace", [False, True])
def test_audit_leaves_the_garbage_collector_as_it_found_it(tmp_path: Path, pace: bool) -> None:
    import gc

    from tests.fakes import python_systems

    write_world(tmp_path, n=6)
    proto = _protocol(tmp_path, "tests.fakes.python_systems:gc_probe")
    python_systems.GC_SEEN.clear()
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    snapaudit.audit(proto, tmp_path / "run", pace_gc=pace)
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen
    seen = python_systems.GC_SEEN
    assert len(seen) == 6 * 2 * 2
    if pace:  # paced while the cells ran, restored after
        assert all(young >= 20_000 and count > frozen for young, count in seen)
    else:  # a library caller's collector is never touched
        assert seen == [(before[0], frozen)] * len(seen)


def test_the_cli_paces_the_collector_while_cells_run(tmp_path: Path) -> None:
    import gc

    from click.testing import CliRunner

    from snapaudit.cli import cli
    from tests.fakes import python_systems

    write_world(tmp_path, n=6)
    proto = _protocol(tmp_path, "tests.fakes.python_systems:gc_probe")
    python_systems.GC_SEEN.clear()
    before, frozen = gc.get_threshold(), gc.get_freeze_count()
    result = CliRunner().invoke(cli, ["run", str(proto), "--run-dir", str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    assert len(python_systems.GC_SEEN) == 6 * 2 * 2
    assert all(young >= 20_000 for young, _ in python_systems.GC_SEEN)
    assert gc.get_threshold() == before and gc.get_freeze_count() == frozen


def test_a_failing_call_keeps_its_traceback_and_status_failures_shows_it(
        tmp_path: Path) -> None:
    from click.testing import CliRunner

    from snapaudit.cli import cli
    from snapaudit.systems.python import traceback_tail

    write_world(tmp_path, n=6)
    proto = _protocol(tmp_path, "tests.fakes.python_systems:flaky")
    snapaudit.audit(proto, tmp_path / "run")
    metas = query(tmp_path / "run" / "ledger.sqlite",
                  "SELECT meta FROM attempts WHERE reason='exception'")
    assert metas and all(m is not None for (m,) in metas)
    tb = json.loads(metas[0][0])["traceback"]
    assert tb.startswith("Traceback") and "in flaky" in tb
    assert tb.rstrip().endswith("RuntimeError: index shard offline for " + tb.rstrip()[-4:])
    out = CliRunner().invoke(cli, ["status", str(tmp_path / "run"), "--failures"])
    assert out.exit_code == 0, out.output
    assert "attempt 1 (accepted later): exception: RuntimeError" in out.output
    assert "in flaky" in out.output
    as_json = CliRunner().invoke(cli, ["status", str(tmp_path / "run"), "--failures", "--json"])
    failed = json.loads(as_json.output)["failed_attempts"]
    assert len(failed) == 10 and all(f["traceback"] for f in failed)  # at most 10 per stage

    def deep(n: int) -> None:  # alternating frames: Python does not fold them
        if n == 0:
            raise ValueError("innermost token=abcdefghijklmnop")
        other(n - 1)

    def other(n: int) -> None:
        deep(n)

    try:
        deep(200)
    except ValueError as exc:
        cut = traceback_tail(exc)
    assert len(cut) <= 4096 + 40 and cut.startswith("... (outer frames cut)")
    assert cut.rstrip().endswith("ValueError: innermost token=[REDACTED]")
