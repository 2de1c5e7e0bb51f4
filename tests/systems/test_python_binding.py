"""A Python system's code beyond its target file is bound: the local modules it imports, the
installed distributions they use and its ``bind_files``; a ``run`` whose code changed is
refused (exit 2) naming what changed, mid-run and on a finished run alike."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
from pathlib import Path

import pytest

from snapaudit.run.bound_systems import describe
from snapaudit.run.record.ledger import Ledger
from snapaudit.systems.config import PythonSystemConfig
from snapaudit.systems.python import python_spec
from tests.helpers.cli import REPO, cli_popen, snapaudit
from tests.helpers.ledger_view import accepted
from tests.helpers.protocol import python_protocol_text, save_protocol, write_world

PIPE = """from {helper} import shape
import pydantic


def answer(call):
    return {{"answer": shape(call.question_id), "doc_ids": ["d1"]}}
"""
HELPER = """def shape(qid):
    return "answer " + qid
"""


def _world(tmp: Path, name: str, *, bind: str = "", max_attempts: int = 3) -> Path:
    write_world(tmp, n=6)
    (tmp / f"{name}_pipe.py").write_text(PIPE.format(helper=f"{name}_helper"), "utf-8")
    (tmp / f"{name}_helper.py").write_text(HELPER, "utf-8")
    (tmp / "index.bin").write_bytes(b"\x00index v1" * 100)
    system = f'target = "{name}_pipe:answer"\npython_path = "."\n{bind}'
    return save_protocol(tmp, python_protocol_text(system, max_attempts=max_attempts))


def test_the_spec_binds_local_modules_distributions_and_files(tmp_path: Path) -> None:
    _world(tmp_path, "bindspec")
    cfg = PythonSystemConfig(target="bindspec_pipe:answer", python_path=".",
                             bind_files=["index.bin"])
    spec = python_spec(cfg, tmp_path)
    digest = hashlib.sha256((tmp_path / "bindspec_helper.py").read_bytes()).hexdigest()
    assert spec["imports"]["modules"]["bindspec_helper"] == digest
    assert set(spec["imports"]["modules"]) == {"bindspec_pipe", "bindspec_helper"}
    assert spec["imports"]["distributions"]["pydantic"]  # an installed distribution's version
    blob = (tmp_path / "index.bin").read_bytes()
    assert spec["files"] == {"index.bin": {"bytes": len(blob),
                                           "sha256": hashlib.sha256(blob).hexdigest()}}
    # without bind_files the protocol's bound fields are what they were
    assert "bind_files" not in PythonSystemConfig(target="a:b").model_dump(mode="json")
    assert describe("old.imports.modules.helper") == "state old: local module helper"
    assert describe("new.files.idx/a.bin.sha256") == "state new: bound file idx/a.bin"


@pytest.mark.slow
def test_editing_a_helper_module_of_a_finished_run_is_refused(tmp_path: Path) -> None:
    proto = _world(tmp_path, "bindfin")
    first = snapaudit("run", str(proto), "--run-dir", "run", "--progress", "silent",
                      cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    again = snapaudit("run", str(proto), "--run-dir", "run", "--progress", "silent",
                      cwd=tmp_path)
    assert again.returncode == 0, again.stderr  # unchanged code: the summary again
    helper = tmp_path / "bindfin_helper.py"
    helper.write_text(HELPER.replace('"answer "', '"Answer "'), "utf-8")
    edited = snapaudit("run", str(proto), "--run-dir", "run", "--progress", "silent",
                       cwd=tmp_path)
    assert edited.returncode == 2
    assert "local module bindfin_helper" in edited.stderr
    assert "new run directory" in edited.stderr


def test_a_changed_bound_file_mid_run_is_refused(tmp_path: Path) -> None:
    proto = _world(tmp_path, "bindmid", bind='bind_files = ["index.bin"]\n', max_attempts=1)
    helper = tmp_path / "bindmid_helper.py"
    helper.write_text("def shape(qid):\n    if qid == 'q001':\n        raise RuntimeError("
                      "'shard down')\n    return 'answer ' + qid\n", "utf-8")
    failed = snapaudit("run", str(proto), "--run-dir", "run", "--progress", "silent",
                       cwd=tmp_path)
    assert failed.returncode != 0  # the answer stage is open (some cells accepted)
    (tmp_path / "index.bin").write_bytes(b"\x00index v2" * 100)
    refused = snapaudit("run", str(proto), "--run-dir", "run", "--progress", "silent",
                        cwd=tmp_path)
    assert refused.returncode == 2, refused.stderr
    assert "bound file index.bin" in refused.stderr
    assert "local module" not in refused.stderr  # only what changed is named


FW_PIPE = """import fakefw


def answer(call):
    if fakefw.DOWN.exists() and call.question_id == "q003":
        raise RuntimeError("shard down")
    return {"answer": fakefw.shape(call.question_id), "doc_ids": ["d1"]}
"""
FW_INIT = """from pathlib import Path

DOWN = Path(__file__).resolve().parents[3] / "down"  # tmp/site/site-packages/fakefw


def shape(qid):
    return "answer " + qid
"""


def _fake_framework(tmp: Path, version: str) -> Path:
    """``tmp/site/site-packages`` holding the installed distribution ``fakefw`` at
    ``version`` (the folder name makes it count as installed, not as local code)."""
    site = tmp / "site" / "site-packages"
    (site / "fakefw").mkdir(parents=True, exist_ok=True)
    (site / "fakefw" / "__init__.py").write_text(FW_INIT, "utf-8")
    info = site / "fakefw-1.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: fakefw\nVersion: {version}\n", "utf-8")
    (info / "top_level.txt").write_text("fakefw\n", "utf-8")
    (info / "RECORD").write_text("fakefw/__init__.py,,\nfakefw-1.0.dist-info/METADATA,,\n"
                                 "fakefw-1.0.dist-info/top_level.txt,,\n"
                                 "fakefw-1.0.dist-info/RECORD,,\n", "utf-8")
    return site


def _fw_run(tmp: Path, site: Path) -> tuple[int, str]:
    """``snapaudit run`` of ``tmp/protocol.toml`` with ``site`` on the CLI's path."""
    env = {"PYTHONPATH": os.pathsep.join([str(REPO / "src"), str(site)]),
           "SNAPAUDIT_TRACEBACK": ""}
    proc = cli_popen("run", "protocol.toml", "--run-dir", "run", "--progress", "silent",
                     cwd=tmp, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                     text=True)
    _, err = proc.communicate(timeout=300)
    return proc.returncode, err


def _fw_world(tmp: Path) -> Path:
    write_world(tmp, n=6)
    (tmp / "fw_pipe.py").write_text(FW_PIPE, "utf-8")
    save_protocol(tmp, python_protocol_text('target = "fw_pipe:answer"\npython_path = "."',
                                            max_attempts=1))
    return _fake_framework(tmp, "1.0")


@pytest.mark.slow
def test_a_changed_framework_version_is_refused_on_a_finished_run(tmp_path: Path) -> None:
    site = _fw_world(tmp_path)
    code, err = _fw_run(tmp_path, site)
    assert code == 0, err
    with Ledger(tmp_path / "run" / "ledger.sqlite") as ledger:
        spec = json.loads(ledger.get_meta("systems_spec") or "{}")
    for state in ("old", "new"):
        assert spec[state]["imports"]["distributions"]["fakefw"] == "1.0"
        assert set(spec[state]["imports"]["modules"]) == {"fw_pipe"}  # fakefw is not local
    assert _fw_run(tmp_path, site)[0] == 0  # the same version: the summary again
    _fake_framework(tmp_path, "1.1")
    code, err = _fw_run(tmp_path, site)
    assert code == 2, err
    assert "state old: installed distribution fakefw" in err
    assert "state new: installed distribution fakefw" in err
    assert "local module" not in err and "Traceback" not in err
    assert "new run directory" in err


@pytest.mark.slow
def test_a_changed_framework_version_is_refused_on_resume(tmp_path: Path) -> None:
    site = _fw_world(tmp_path)
    (tmp_path / "down").touch()  # q003 fails: the answer stage stays open
    code, err = _fw_run(tmp_path, site)
    assert code != 0 and "q003" in err, err
    assert len(accepted(tmp_path / "run" / "ledger.sqlite")) == 20  # mid-way: 5 of 6 asked
    (tmp_path / "down").unlink()
    _fake_framework(tmp_path, "1.1")
    code, err = _fw_run(tmp_path, site)
    assert code == 2, err
    assert "installed distribution fakefw" in err
    assert len(accepted(tmp_path / "run" / "ledger.sqlite")) == 20  # nothing was called
    _fake_framework(tmp_path, "1.0")  # the version the run recorded: it resumes
    code, err = _fw_run(tmp_path, site)
    assert code == 0, err
    assert len(accepted(tmp_path / "run" / "ledger.sqlite")) == 24


FW_LAZY = """def answer(call):
    import fakefw  # loaded at the first call, not with the module

    return {"answer": fakefw.shape(call.question_id), "doc_ids": ["d1"]}
"""


@pytest.mark.slow
def test_a_framework_imported_inside_the_target_is_bound(tmp_path: Path) -> None:
    site = _fw_world(tmp_path)
    (tmp_path / "fw_pipe.py").write_text(FW_LAZY, "utf-8")
    code, err = _fw_run(tmp_path, site)
    assert code == 0, err
    with Ledger(tmp_path / "run" / "ledger.sqlite") as ledger:
        spec = json.loads(ledger.get_meta("systems_spec") or "{}")
        calls = json.loads(ledger.get_meta("systems_call_imports") or "{}")
    assert "fakefw" not in spec["old"]["imports"]["distributions"]  # not reached at import
    assert any(calls[s].get("distributions", {}).get("fakefw") == "1.0" for s in calls)
    assert _fw_run(tmp_path, site)[0] == 0  # the same version: the summary again
    _fake_framework(tmp_path, "1.1")
    code, err = _fw_run(tmp_path, site)
    assert code == 2, err
    assert "installed distribution fakefw 1.0 -> 1.1 (imported during a call)" in err
