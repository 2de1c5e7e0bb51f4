"""A model two states share is never entered twice at once: the README's Python pattern (one
function ``answer(call, index="v1")`` for both states over one module-level model) at the
``init --kind python`` template's ``[run] concurrency = 4``, with nothing else set and with
the docs' ``max_concurrency = 1``; states whose targets share a module share their slots,
states that share nothing do not; and no worker process outlives the run that started it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import snapaudit
from tests.fakes.python_isolation import overlaps, spans
from tests.helpers.cli import cli_popen
from tests.helpers.cli import snapaudit as snapaudit_cli
from tests.helpers.ledger_view import accepted, query
from tests.helpers.protocol import (
    init_python_template,
    python_protocol_text,
    save_protocol,
    write_world,
)

RAISES = '''
import time


class Model:
    """A pure-Python model that is not reentrant: a second caller inside it raises."""

    def __init__(self):
        self.busy = False

    def __call__(self, question):
        if self.busy:
            raise RuntimeError("model entered twice")
        self.busy = True
        try:
            time.sleep(0.02)
            return question.split()[-1].strip("?")
        finally:
            self.busy = False


MODEL = Model()


def answer(call, index="v1"):
    return {"answer": MODEL(call.question), "doc_ids": ["d1"]}
'''
HANGS = RAISES.replace('raise RuntimeError("model entered twice")',
                       "time.sleep(30)  # a native model that deadlocks instead")


def _not_accepted(run_dir: Path) -> list[tuple[str, str, str]]:
    return query(run_dir / "ledger.sqlite", "SELECT cell_key, outcome, error FROM attempts "
                 "WHERE outcome != 'accepted' ORDER BY id")


@pytest.mark.parametrize(("pipeline", "settings"), [
    (RAISES, ""),                            # the template as written
    (RAISES, "max_concurrency = 1"),         # docs/adapters.md's advice, per system
    (HANGS, "max_concurrency = 1"),          # ... with a model that hangs when re-entered
])
def test_the_readme_pattern_never_enters_its_shared_model_twice(
        tmp_path: Path, pipeline: str, settings: str) -> None:
    proto = init_python_template(tmp_path, pipeline)
    text = proto.read_text("utf-8")
    assert "\nconcurrency = 4" in text  # the template's, several calls in flight
    if settings:
        text = text.replace('kwargs = { index = "v1" }', f'kwargs = {{ index = "v1" }}\n'
                                                         f"{settings}")
        text = text.replace('kwargs = { index = "v2" }', f'kwargs = {{ index = "v2" }}\n'
                                                         f"{settings}")
        proto.write_text(text, "utf-8")
    timeout = ["--set", "run.timeout_s=2"] if pipeline is HANGS else []  # fail in seconds
    out = snapaudit_cli("run", str(proto), "--run-dir", "run", "--progress", "silent",
                        *timeout, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert len(accepted(tmp_path / "run" / "ledger.sqlite")) == 32  # 8 x 2 states x 2
    assert _not_accepted(tmp_path / "run") == []  # not one call met the model busy


def _logged_pipeline(name: str, model: str) -> str:
    return f'''
from {model} import call_model


def answer(call, index="v1"):
    return call_model(call, "{name}")
'''


LOGGED_MODEL = '''
import json, os, time


def call_model(call, target):
    start = time.time()
    time.sleep(0.05)
    with open(os.environ.get("SHARED_LOG", "calls.jsonl"), "a") as f:
        f.write(json.dumps({"state": call.state, "target": target, "qid": call.question_id,
                            "repeat": call.repeat, "start": start, "end": time.time()}) + "\\n")
    return "answer " + call.question_id
'''


@pytest.mark.parametrize(("shared", "settings", "overlapping"), [
    (True, "", False),                       # two modules reaching one model module
    (False, "", True),                       # nothing shared: each state its own slot
    (True, "thread_safe = true", True),      # the user says calls may overlap
])
def test_states_share_slots_when_their_targets_share_a_module(
        tmp_path: Path, shared: bool, settings: str, overlapping: bool,
        monkeypatch: pytest.MonkeyPatch) -> None:
    tag = tmp_path.name.replace("-", "_").replace("[", "_").replace("]", "_")
    write_world(tmp_path, n=6)
    models = {"old": f"model_{tag}", "new": f"model_{tag}" if shared else f"other_{tag}"}
    for state, model in models.items():
        (tmp_path / f"{model}.py").write_text(LOGGED_MODEL, "utf-8")
        (tmp_path / f"pipe_{state}_{tag}.py").write_text(_logged_pipeline(state, model),
                                                         "utf-8")
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("SHARED_LOG", str(log))
    old, new = (f'target = "pipe_{state}_{tag}:answer"\npython_path = "."\n{settings}'
                for state in ("old", "new"))
    proto = save_protocol(tmp_path, python_protocol_text(old, new, run={"concurrency": 4}))
    snapaudit.audit(proto, tmp_path / "run")
    calls = spans(log)
    assert len(calls) == 24 and {c["target"] for c in calls} == {"old", "new"}
    assert (overlaps(calls) > 0) is overlapping


def _alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its reaper does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.slow
def test_no_worker_outlives_a_run_killed_mid_call(tmp_path: Path) -> None:
    pids = tmp_path / "pids"
    pids.mkdir()
    (tmp_path / "stuck.py").write_text(f'''
import os, time
from pathlib import Path


def answer(call):
    Path({str(pids)!r}, str(os.getpid())).touch()
    time.sleep(600)  # a call that never returns while the run is killed
''', "utf-8")
    write_world(tmp_path, n=6)
    proto = save_protocol(tmp_path, python_protocol_text(
        'target = "stuck:answer"\npython_path = "."\nisolation = "process"\n'
        "max_concurrency = 2", run={"concurrency": 4, "timeout_s": 600}))
    proc = cli_popen("run", str(proto), "--run-dir", str(tmp_path / "run"), "--progress",
                     "silent", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while len(list(pids.iterdir())) < 4 and time.monotonic() < deadline:  # 2 per state
        time.sleep(0.05)
    workers = [int(p.name) for p in pids.iterdir()]
    assert len(workers) == 4 and all(_alive(w) for w in workers)
    os.kill(proc.pid, signal.SIGKILL)  # no finally, no atexit: only the workers can act
    proc.wait()
    deadline = time.monotonic() + 10
    while any(_alive(w) for w in workers) and time.monotonic() < deadline:
        time.sleep(0.05)
    left = [w for w in workers if _alive(w)]
    for pid in left:  # leave nothing behind even when the test fails
        os.kill(pid, signal.SIGKILL)
    assert left == []


@pytest.mark.slow
def test_a_shared_llama_cpp_chat_model_at_the_template_defaults(
        tmp_path: Path, smollm2_path: Path) -> None:
    pytest.importorskip("langchain_community", reason="pip install -e '.[langchain]'")
    proto = init_python_template(tmp_path, f'''
import warnings

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langchain_community.chat_models import ChatLlamaCpp

MODEL = ChatLlamaCpp(model_path={str(smollm2_path)!r}, n_ctx=512, max_tokens=6,
                     temperature=0.7, seed=0, verbose=False)


def answer(call, index="v1"):
    reply = MODEL.invoke([("system", "Answer with one word."), ("user", call.question)])
    return {{"answer": reply.content or "-", "doc_ids": ["d1"]}}
''')
    out = snapaudit_cli("run", str(proto), "--run-dir", "run", "--limit", "3", "--progress",
                        "silent", cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]  # two threads in llama.cpp: SIGABRT (134)
    run = tmp_path / "run.smoke-3"
    assert len(accepted(run / "ledger.sqlite")) == 12
    assert _not_accepted(run) == []
