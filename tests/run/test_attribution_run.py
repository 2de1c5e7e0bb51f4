"""``snapaudit attribute`` end to end on the testbed, with a fake generator that answers from
the evidence text: a planted document deterministically flips its question's answer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from snapaudit.errors import ConfigError, LockError, RetriesExhaustedError
from snapaudit.progress import SilentProgress
from snapaudit.results import read_results
from snapaudit.run.after.attribution_run import attribute_run
from snapaudit.run.after.attribution_systems import NEEDS
from snapaudit.run.after.status import run_status
from snapaudit.run.engine import reanalyze, run_protocol_file
from snapaudit.run.execution.schedule import derive_seed
from snapaudit.stats.attribution import CAUSED, NOT_EXPLAINED
from tests.fakes.llm_server import FakeLLMServer, LLMCall
from tests.fakes.rag_service import FakeRagService
from tests.helpers.attribution import attribution_protocol, attribution_world, evidence_responder
from tests.helpers.cli import exit_code
from tests.helpers.ledger_view import accepted
from tests.helpers.protocol import write_protocol, write_world


@pytest.mark.slow
@pytest.mark.parametrize("judge", ['kind = "none"', 'kind = "rule"\nname = "rule"'])
def test_attribution_names_the_planted_document_and_resumes_without_calls(
        tmp_path: Path, judge: str, capsys: pytest.CaptureFixture[str]) -> None:
    corpus, planted = attribution_world(tmp_path)
    with FakeLLMServer(responder=evidence_responder) as srv:
        proto = attribution_protocol(tmp_path, corpus, srv.openai_base_url, judge)
        run_dir = tmp_path / "run"
        run_protocol_file(proto, run_dir, [], SilentProgress())
        before = len(srv.calls)
        dry = attribute_run(run_dir, SilentProgress(), dry_run=True)
        assert dry.table is None and len(srv.calls) == before
        assert exit_code(["attribute", str(run_dir), "--dry-run", "--progress", "silent"]) == 0
        assert f"calls: {dry.planned_calls} planned" in capsys.readouterr().out
        with pytest.raises(ConfigError, match="over the budget of 1"):
            attribute_run(run_dir, SilentProgress(), max_calls=1)
        assert len(srv.calls) == before
        outcome = attribute_run(run_dir, SilentProgress())
        made = len(srv.calls) - before
        # common random numbers: O + plant (suff1) draws with the old state's seeds, N - plant
        # (nec1) with the new state's, repeat for repeat
        seeds = {(("PLANTED" in c.user), c.body["seed"]) for c in srv.calls[before:]}
        assert seeds == {(True, derive_seed(7, "answer", f"q0|s1|{r}", 1)) for r in (1, 2)} | {
            (False, derive_seed(7, "answer", f"q0|s2|{r}", 1)) for r in (1, 2)}
        assert outcome.table is not None
        rows = outcome.table.to_json()["questions"]
        assert list(rows) == ["q0"]  # the only question whose answers changed
        assert rows["q0"]["verdict"] == CAUSED and rows["q0"]["caused"] == [planted]
        assert rows["q0"]["flip"] is True and rows["q0"]["agreement"] == 1.0
        db = run_dir / "ledger.sqlite"
        answered = len(accepted(db, "attribution"))
        judged = len(accepted(db, "attribution:judge:rule"))
        assert made == answered == 2 * 2  # suff1 and nec1, two repeats (the rule judge is local)
        assert dry.pending_calls == answered + judged and judged == (0 if "none" in judge else 2)
        again = attribute_run(run_dir, SilentProgress())  # locked: no call at all
        assert len(srv.calls) == before + made and again.pending_calls == 0
        assert again.table == outcome.table
    status = run_status(run_dir)  # the attribution lock binds its judge packets too
    assert status.locked_verified[-1] == "attribution" and not status.open_verified
    results = run_dir / "results.json"
    data = json.loads(results.read_text())
    assert data["attribution"]["questions"]["q0"]["caused"] == [planted]
    assert read_results(results).to_json() == data
    reanalyze(run_dir, SilentProgress())  # e.g. after a judge audit: the section is kept
    assert json.loads(results.read_text())["attribution"] == data["attribution"]
    assert NOT_EXPLAINED in data["attribution"]["verdicts"]


def test_attribution_needs_a_finished_testbed_run(tmp_path: Path) -> None:
    with pytest.raises(LockError, match="not a run directory"):
        attribute_run(tmp_path, SilentProgress())
    write_world(tmp_path)
    with FakeRagService() as svc:
        run_protocol_file(write_protocol(tmp_path, svc), tmp_path / "run", [],
                          SilentProgress())
        with pytest.raises(ConfigError, match=re.escape(NEEDS["http"])):
            attribute_run(tmp_path / "run", SilentProgress())
    assert exit_code(["attribute", str(tmp_path / "run"), "--progress", "silent"]) == 2


@pytest.mark.slow
def test_a_failed_attribution_resumes_with_only_its_missing_cells(tmp_path: Path) -> None:
    corpus, planted = attribution_world(tmp_path)
    broken = {"on": False}

    def flaky(call: LLMCall) -> str:  # while broken: only evidence with the plant answers
        if broken["on"] and "PLANTED" not in call.user:
            return json.dumps({"answer": ""})  # an invalid answer: retried, then exhausted
        return evidence_responder(call)

    with FakeLLMServer(responder=flaky) as srv:
        run_dir = tmp_path / "run"
        run_protocol_file(attribution_protocol(tmp_path, corpus, srv.openai_base_url,
                                               'kind = "none"'),
                          run_dir, [], SilentProgress())
        broken["on"] = True
        with pytest.raises(RetriesExhaustedError):
            attribute_run(run_dir, SilentProgress())
        db = run_dir / "ledger.sqlite"
        assert sorted(accepted(db, "attribution")) == ["q0|suff1|1", "q0|suff1|2"]
        broken["on"] = False
        before = len(srv.calls)
        outcome = attribute_run(run_dir, SilentProgress())
        assert outcome.pending_calls == 2 and len(srv.calls) == before + 2  # nec1 only
    assert outcome.table is not None
    assert outcome.table.to_json()["questions"]["q0"]["caused"] == [planted]
