"""The local worker pool: no main guard needed, errors keep their type, workers reaped."""

from __future__ import annotations

import hashlib
import itertools
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from snapaudit.errors import InputError
from snapaudit.testbed.corpus.build import CorpusInput, build_corpus
from snapaudit.testbed.corpus.executor import open_engine
from snapaudit.testbed.corpus.workers import WorkerPool
from tests.testbed.conftest import generated_docs, write_jsonl

REPO = Path(__file__).resolve().parents[3]

SCRIPT = """\
import sys
from pathlib import Path
from snapaudit.testbed.corpus.build import CorpusInput, build_corpus
print("script top level ran")
build_corpus([CorpusInput(Path(sys.argv[1]))], sys.argv[2], shards=3, segment_docs=20,
             workers=2)
print("built")
"""


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_a_script_without_main_guard_builds_on_a_local_pool(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", generated_docs(120))
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    res = subprocess.run([sys.executable, str(script), str(src), str(tmp_path / "pool")],
                         env=env, capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "script top level ran\nbuilt\n"  # the workers did not re-run it
    build_corpus([CorpusInput(src)], tmp_path / "one", shards=3, segment_docs=20)
    assert _tree(tmp_path / "pool") == _tree(tmp_path / "one")


def _fail(doc_id: str) -> None:
    raise InputError(f"bad document {doc_id}")


def test_pool_returns_in_order_raises_the_task_error_and_reaps_every_worker() -> None:
    with open_engine("local", 2) as eng:
        handles = [eng.submit(os.getpid) for _ in range(6)]
        pids = {h.result() for h in handles}
        assert eng.submit(pow, 3, 4).result() == 81
        with pytest.raises(InputError, match="bad document d7"):
            eng.submit(_fail, "d7").result()
    assert len(pids) >= 1 and os.getpid() not in pids
    for pid in pids:  # waited for on close: no such process (not even a zombie) remains
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_pool_closed_by_an_error_stops_its_workers() -> None:
    with pytest.raises(RuntimeError, match="stop"), open_engine("local", 2) as eng:
        pid = eng.submit(os.getpid).result()
        raise RuntimeError("stop")
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def _span(delay: float) -> tuple[float, float]:
    start = time.monotonic()  # system-wide: comparable across processes
    time.sleep(delay)
    return start, time.monotonic()


def test_pool_limit_runs_one_call_at_a_time_until_raised() -> None:
    pool = WorkerPool(2)
    try:
        pool.set_limit(1)
        spans = sorted(f.result() for f in [pool.submit(_span, 0.2) for _ in range(3)])
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans))  # never two at once
        pool.set_limit(2)
        both = sorted(f.result() for f in [pool.submit(_span, 0.6) for _ in range(2)])
        assert both[0][1] > both[1][0]  # side by side
    finally:
        pool.close()
