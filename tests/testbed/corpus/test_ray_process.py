"""Ray driven from a process of its own: same index files, tasks held back while ingesting,
errors keep their type, an input error stops at once, nothing of Ray left behind."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from snapaudit.errors import InputError
from snapaudit.testbed.corpus.build import CorpusInput, build_corpus
from tests.testbed.conftest import generated_docs, write_jsonl

pytest.importorskip("ray", reason="the Ray engine needs the `ray` extra "
                                  "(pip install 'snapaudit[ray]')")

from snapaudit.testbed.corpus.ray_process import RayProcessEngine

REPO = Path(__file__).resolve().parents[3]

SCRIPT = """\
import sys
from pathlib import Path
from snapaudit.testbed.corpus.build import CorpusInput, build_corpus
build_corpus([CorpusInput(Path(sys.argv[1]))], sys.argv[2], shards=3, segment_docs=20,
             engine="ray", workers=2)
print("ray imported" if "ray" in sys.modules else "ray not imported")
"""


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _ray_processes() -> int:
    """Ray's node processes on this machine (raylet and GCS server)."""
    n = 0
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            comm = Path(f"/proc/{pid}/comm").read_text().strip()
        except OSError:
            continue
        n += comm in ("raylet", "gcs_server")
    return n


def _fail(doc_id: str) -> None:
    raise InputError(f"bad document {doc_id}")


@pytest.mark.slow
def test_a_ray_build_never_imports_ray_in_the_caller_and_leaves_no_ray_behind(
        tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", generated_docs(150, seed=4))
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT, encoding="utf-8")
    before = _ray_processes()
    env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
    res = subprocess.run([sys.executable, str(script), str(src), str(tmp_path / "ray")],
                         env=env, capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stderr
    assert res.stdout == "ray not imported\n"
    assert _ray_processes() <= before  # the instance it started is gone when it returns
    build_corpus([CorpusInput(src)], tmp_path / "one", shards=3, segment_docs=20)
    assert _tree(tmp_path / "ray") == _tree(tmp_path / "one")


@pytest.mark.slow
def test_tasks_wait_while_ingesting_and_errors_keep_their_type() -> None:
    with RayProcessEngine(2) as eng:
        eng.set_ingesting(True)  # 2 cores here: one task at a time beside the ingest
        first = eng.submit(subprocess.call, ["sleep", "0.5"])
        rest = [eng.submit(os.path.join, "a", str(i)) for i in range(3)]
        assert eng.held == 3
        assert first.result() == 0
        eng.poll()  # the slot is free again: the next task goes
        assert eng.held == 2
        eng.set_ingesting(False)
        assert eng.held == 0
        assert [h.result() for h in rest] == ["a/0", "a/1", "a/2"]
        with pytest.raises(InputError, match="bad document d7"):
            eng.submit(_fail, "d7").result()
        with pytest.raises(FileNotFoundError):
            eng.submit(os.path.getsize, "/nonexistent/snapaudit").result()
        assert eng.submit(pow, 2, 10).result() == 1024  # the engine still works


def test_an_input_error_stops_a_ray_build_at_once_and_leaves_no_ray_behind(
        tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", generated_docs(60, seed=2))
    with open(src, "a", encoding="utf-8") as f:
        f.write("{not json\n")
    before = _ray_processes()
    t0 = time.monotonic()
    with pytest.raises(InputError, match="invalid JSON"):
        build_corpus([CorpusInput(src)], tmp_path / "c", shards=3, engine="ray", workers=2)
    assert time.monotonic() - t0 < 5  # not held up by Ray's start
    time.sleep(0.5)
    assert _ray_processes() <= before
