"""The retrieval lock (RetrievingSystem states) and an LLM-free judge through the runner."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from snapaudit.errors import IntegrityError, LockError
from snapaudit.progress import SilentProgress
from snapaudit.run.engine import run_audit
from snapaudit.run.record.ledger import Ledger
from snapaudit.run.record.protocol import apply_overrides, parse_protocol
from snapaudit.systems.base import AnswerCall, AnswerOutcome, Evidence
from tests.helpers.protocol import write_world


class FakeRetrieving:
    """A deterministic retrieving system; ``flaky`` makes pass 2 differ for one question."""

    def __init__(self, state: str, flaky: str | None = None):
        self.state = state
        self.flaky = flaky
        self.seen_evidence: list[Evidence | None] = []

    def spec(self) -> dict[str, Any]:
        return {"kind": "fake-retrieving", "state": self.state}

    async def retrieve(self, question_id: str, question: str,
                       pass_no: int) -> Evidence | None:
        if self.state == "n0":
            return None
        extra = f"-p{pass_no}" if question_id == self.flaky else ""
        return Evidence((f"{self.state}-{question_id}{extra}",), f"[{question}]")

    async def answer(self, call: AnswerCall) -> AnswerOutcome:
        self.seen_evidence.append(call.evidence)
        text = "the same thing" if call.repeat == 1 else "The same thing."
        return AnswerOutcome(f"{text} {call.question_id}",
                             call.evidence.doc_ids if call.evidence else None)

    async def aclose(self) -> None:
        return None


def _protocol(**judge: Any) -> Any:
    data = {
        "name": "stages", "states": {"order": ["n0", "n1"], "old": "n0", "new": "n1"},
        "cohort": {"source": "jsonl", "path": "questions.jsonl", "size": 6},
        "gold": {"path": "gold.jsonl"}, "system": {"kind": "testbed"},
        "testbed": {"states": {"n0": 0, "n1": 1}},
        "judge": judge or {"kind": "none"}, "bootstrap": {"draws": 200},
        "gate": {"profile": "study" if judge else "exact-only"},
        "run": {"backoff_base_s": 0.0},
    }
    return parse_protocol(apply_overrides(data, []))


def test_retrieval_lock_then_evidence_reaches_the_answer_call(tmp_path: Path) -> None:
    write_world(tmp_path)
    systems = {"n0": FakeRetrieving("n0"), "n1": FakeRetrieving("n1")}
    out = run_audit(_protocol(kind="rule", name="rule"), tmp_path / "run", base_dir=tmp_path,
                    progress=SilentProgress(), systems=systems)
    with Ledger(tmp_path / "run" / "ledger.sqlite") as ledger:
        assert [r["stage"] for r, _ in ledger.locks()] == [
            "retrieval", "answer", "semantic", "gold"]
        assert len(ledger.accepted_keys("retrieval")) == 6 * 2 * 2
        assert len(ledger.accepted_keys("judge:rule")) == 6
    assert systems["n0"].seen_evidence == [None] * 12
    assert {e.doc_ids[0][:3] for e in systems["n1"].seen_evidence if e} == {"n1-"}
    rows = [json.loads(x) for x in
            (tmp_path / "run/tables/answers.jsonl").read_text().splitlines()]
    assert len(rows) == 24
    n1_docs = {r["question_id"]: r["doc_ids"] for r in rows if r["state"] == "n1"}
    assert n1_docs == {qid: [f"n1-{qid}"] for qid in n1_docs} and len(n1_docs) == 6
    assert all("doc_ids" not in r for r in rows if r["state"] == "n0")
    # the rule judge calls "the same thing q" and "The same thing. q" the same
    assert out.results["kernels"]["semantic"]["within"] == 100.0
    labels = (tmp_path / "run/tables/labels.jsonl").read_text().splitlines()
    assert len(labels) == 6 * 6 and all('"judge": "rule"' in x for x in labels)


def test_irreproducible_retrieval_is_refused_naming_cells(tmp_path: Path) -> None:
    write_world(tmp_path)
    systems = {"n0": FakeRetrieving("n0"), "n1": FakeRetrieving("n1", flaky="q001")}
    proto = _protocol()
    proto = parse_protocol(apply_overrides(proto.model_dump(mode="json", exclude_none=True),
                                           ["cohort.size=12"]))
    with pytest.raises(IntegrityError, match=r"for 1 cell\(s\): q001\|n1"):
        run_audit(proto, tmp_path / "run", base_dir=tmp_path, progress=SilentProgress(),
                  systems=systems)
    with Ledger(tmp_path / "run" / "ledger.sqlite") as ledger:
        assert ledger.locks() == []
        assert ledger.accepted_keys("answer") == set()


def test_gold_is_unreadable_before_the_locks(tmp_path: Path) -> None:
    from snapaudit.run.context import RunContext
    from snapaudit.run.engine import read_gold

    run = RunContext.__new__(RunContext)
    run.chain = []
    with pytest.raises(LockError, match="only after the answer and semantic locks"):
        read_gold(run)
