"""What a target imports at call time is bound like what it imports at import time (a helper
imported inside a function, edited after a finished run, is refused by name, in threads and
in worker processes); ``python_path`` is on ``sys.path`` only while the target's code runs;
a run with no accepted cell starts again after a code change, as a fresh run would."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import snapaudit
from tests.helpers.cli import snapaudit as snapaudit_cli
from tests.helpers.ledger_view import accepted, query
from tests.helpers.protocol import (
    init_python_template,
    python_protocol_text,
    save_protocol,
    write_world,
)

LAZY = '''
def answer(call, index="v1"):
    from fmt import format_docs  # imported at the first call, not with the module

    return {"answer": format_docs(call.question), "doc_ids": ["d1"]}
'''
FMT = '''def format_docs(question):
    return question.split()[-1].strip("?")
'''


def _run(proto: Path, *extra: str) -> tuple[int, str]:
    out = snapaudit_cli("run", str(proto), "--run-dir", "run", *extra, cwd=proto.parent)
    return out.returncode, out.stdout + out.stderr


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_a_helper_imported_inside_the_target_is_bound(tmp_path: Path, isolation: str) -> None:
    proto = init_python_template(tmp_path, LAZY)
    (tmp_path / "fmt.py").write_text(FMT, "utf-8")
    if isolation == "process":
        text = proto.read_text("utf-8").replace('python_path = "."',
                                                'python_path = "."\nisolation = "process"')
        proto.write_text(text, "utf-8")
    code, out = _run(proto)
    assert code == 0, out
    assert _run(proto)[0] == 0  # unchanged: the summary again
    (tmp_path / "fmt.py").write_text(FMT.replace("[-1]", "[0]"), "utf-8")
    code, out = _run(proto)
    assert code == 2, out
    assert "state old: local module fmt (imported during a call)" in out
    assert "run already complete" not in out and "Traceback" not in out
    (tmp_path / "fmt.py").write_text(FMT, "utf-8")  # the code the run recorded
    assert _run(proto)[0] == 0


def test_a_run_leaves_sys_path_as_it_found_it(tmp_path: Path) -> None:
    tag = tmp_path.name.replace("-", "_")
    code = tmp_path / "code"
    code.mkdir()
    (code / f"lazy_{tag}.py").write_text(
        f"def answer(call):\n    from helper_{tag} import shape\n\n"
        "    return shape(call.question_id)\n", "utf-8")
    (code / f"helper_{tag}.py").write_text("def shape(qid):\n    return 'answer ' + qid\n",
                                           "utf-8")
    write_world(tmp_path, n=6)
    proto = save_protocol(tmp_path, python_protocol_text(
        f'target = "lazy_{tag}:answer"\npython_path = "code"', run={"concurrency": 4}))
    before = list(sys.path)
    snapaudit.audit(proto, tmp_path / "run")
    assert sys.path == before  # the folder was there only while the target's code ran
    db = tmp_path / "run" / "ledger.sqlite"
    assert len(accepted(db)) == 24  # the sibling imported at call time was found
    recorded = json.loads(query(db, "SELECT value FROM meta WHERE key = "
                                    "'systems_call_imports'")[0][0])
    helper = {f"helper_{tag}": {"path": f"code/helper_{tag}.py", "sha256": _sha(
        code / f"helper_{tag}.py")}}
    assert any(recorded[s]["modules"] == helper for s in ("old", "new"))


def _sha(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


BROKEN = "def answer(call):\n    raise RuntimeError('index not built yet')\n"
FIXED = "def answer(call):\n    return {'answer': f'answer {call.seed % 7}', 'doc_ids': ['d1']}\n"


def test_a_run_with_no_accepted_cell_starts_again_after_a_code_change(tmp_path: Path) -> None:
    write_world(tmp_path, n=6)
    (tmp_path / "pipe.py").write_text(BROKEN, "utf-8")
    proto = save_protocol(tmp_path, python_protocol_text(
        'target = "pipe:answer"\npython_path = "."', max_attempts=2))
    code, out = _run(proto, "--progress", "plain")
    assert code != 0 and "index not built yet" in out
    assert len(accepted(tmp_path / "run" / "ledger.sqlite")) == 0
    (tmp_path / "pipe.py").write_text(FIXED, "utf-8")
    code, out = _run(proto, "--progress", "plain")
    assert code == 0, out
    assert "the run starts again with the code as it is now" in out
    assert "state old: the target's module (source_sha256)" in out
    fresh = snapaudit_cli("run", str(proto), "--run-dir", "fresh", "--progress", "silent",
                          cwd=tmp_path)
    assert fresh.returncode == 0, fresh.stderr
    db, fresh_db = tmp_path / "run" / "ledger.sqlite", tmp_path / "fresh" / "ledger.sqlite"
    assert {k: p for k, (_, p) in accepted(db).items()} == \
        {k: p for k, (_, p) in accepted(fresh_db).items()}  # seeds as a fresh run's
    locks = "SELECT stage, record_hash FROM locks ORDER BY seq"
    assert query(db, locks) == query(fresh_db, locks)  # the same answers, the same locks
    failed = query(db, "SELECT COUNT(*) FROM attempts WHERE outcome != 'accepted'")[0][0]
    assert failed >= 2  # the broken code's attempts stay in the ledger (its history)
