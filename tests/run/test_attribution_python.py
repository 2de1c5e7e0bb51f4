"""``snapaudit attribute`` of a Python system that opts in with an ``evidence`` keyword, and
the errors that name what a system needs to be attributed."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from snapaudit.errors import ConfigError
from snapaudit.progress import SilentProgress
from snapaudit.run.after.attribution_run import attribute_run
from snapaudit.run.after.attribution_systems import NEEDS, NEEDS_DOCUMENTS
from snapaudit.run.engine import run_protocol_file
from snapaudit.stats.attribution import CAUSED
from tests.fakes.python_systems import TEXTS
from tests.helpers.protocol import python_protocol_text, save_protocol, write_world

OLD = 'target = "tests.fakes.python_systems:retrieving"\nkwargs = { docs = ["a", "b"] }'
NEW = 'target = "tests.fakes.python_systems:retrieving"\nkwargs = { docs = ["a", "p"] }'


def _run(tmp: Path, old: str, new: str) -> Path:
    write_world(tmp, n=6)
    proto = save_protocol(tmp, python_protocol_text(old, new))
    run_protocol_file(proto, tmp / "run", [], SilentProgress())
    return tmp / "run"


def _documents(tmp: Path) -> Path:
    path = tmp / "docs.jsonl"
    path.write_text("".join(json.dumps({"id": d, "url": f"https://x/{d}", "text": t}) + "\n"
                            for d, t in TEXTS.items()))
    return path


@pytest.mark.slow
@pytest.mark.parametrize("isolation", ["thread", "process"])
def test_a_python_target_with_an_evidence_keyword_is_attributed(tmp_path: Path,
                                                                isolation: str) -> None:
    # the evidence reaches the target in the state's own runner (a worker process too)
    line = f'\nisolation = "{isolation}"'
    run_dir = _run(tmp_path, OLD + line, NEW + line)
    with pytest.raises(ConfigError, match=re.escape(NEEDS_DOCUMENTS.format(kind="python"))):
        attribute_run(run_dir, SilentProgress())
    outcome = attribute_run(run_dir, SilentProgress(), documents=_documents(tmp_path))
    assert outcome.table is not None
    row = outcome.table.to_json()["questions"]["q000"]
    assert list(outcome.table.to_json()["questions"]) == ["q000"]  # the only question that changed
    assert (row["verdict"], row["caused"], row["old"], row["new"]) == (
        CAUSED, ["p"], ["a", "b"], ["a", "p"])
    assert row["documents"] == [{"doc_id": "p", "rank": 2, "sufficiency": 1.0,
                                 "necessity": 1.0, "caused": True}]


@pytest.mark.slow
def test_a_python_target_without_the_keyword_is_refused_by_name(tmp_path: Path) -> None:
    plain = 'target = "tests.fakes.python_systems:flaky"'
    run_dir = _run(tmp_path, plain, plain)
    with pytest.raises(ConfigError, match=re.escape(NEEDS["python"])):
        attribute_run(run_dir, SilentProgress(), documents=_documents(tmp_path))
