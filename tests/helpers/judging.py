"""Shared data of the judge-audit and replicate tests: the stage tests in tests/run/ and the
command tests in tests/cli/ (answer grids, the primary labels, locked evidence, a run directory)."""

from __future__ import annotations

import json
from pathlib import Path

from snapaudit.run.record.ledger import Ledger
from snapaudit.systems.base import Evidence
from snapaudit.tables import AnswerRef, AnswerRow, PairLabel, write_answers, write_labels
from tests.fakes.judge_server import first_word
from tests.fakes.llm_server import LLMCall

GRIDS = ([["Paris"] * 4] * 4 + [["Paris", "Paris", "Lyon", "Lyon"]] * 4
         + [["Paris France", "Paris France", "Paris Texas", "Paris Texas"]] * 2)

REFS = [AnswerRef("old", 1), AnswerRef("old", 2), AnswerRef("new", 1), AnswerRef("new", 2)]


def grid_answers() -> list[AnswerRow]:
    return [AnswerRow(f"q{i}", ref.state, ref.repeat, text, question="Which city?")
            for i, texts in enumerate(GRIDS) for ref, text in zip(REFS, texts, strict=True)]


def grid_labels() -> list[PairLabel]:
    """The primary judge follows the planted partition: same iff the first word agrees."""
    labels = []
    for i, texts in enumerate(GRIDS):
        for x in range(4):
            for y in range(x + 1, 4):
                a, b = sorted((REFS[x], REFS[y]))
                same = first_word(texts[x]) == first_word(texts[y])
                labels.append(PairLabel(f"q{i}", a, b, same, "primary"))
    return labels


QIDS = ["q0", "q1", "q2", "q3"]

STATES = ("old", "mid", "new")


def responder(call: LLMCall) -> str:
    """The second generator answers from the evidence: Paris if it mentions Paris."""
    return json.dumps({"answer": "Paris" if "Paris" in call.user else "Lyon"})


def original_tables() -> tuple[list[AnswerRow], list[PairLabel]]:
    rows = [AnswerRow(q, s, r, "Lyon", question="Which city?")
            for q in QIDS for s in STATES for r in (1, 2)]
    refs = [AnswerRef(s, r) for s in STATES for r in (1, 2)]
    labels = [PairLabel(q, a, b, True, "judge")
              for q in QIDS for i, a in enumerate(refs) for b in refs[i + 1:]]
    return rows, labels


def locked_evidence() -> dict[tuple[str, str], Evidence | None]:
    """New-state evidence names Paris for q0 and q1 only."""
    out: dict[tuple[str, str], Evidence | None] = {}
    for q in QIDS:
        out[(q, "old")] = Evidence(("d1",), "Lyon is a city.")
        new_text = "Paris is a city." if q in ("q0", "q1") else "Lyon is a city."
        out[(q, "new")] = Evidence(("d2",), new_text)
    return out


REPLICATE_PROTOCOL = """
name = "replicate-test"
[states]
order = ["old", "mid", "new"]
old = "old"
new = "new"
[design]
seed = 1
[cohort]
source = "jsonl"
path = "questions.jsonl"
size = 4
[gold]
path = "gold.jsonl"
[system]
kind = "testbed"
[testbed]
corpus = "corpus"
states = {old = 1, mid = 2, new = 3}
[judge]
kind = "rule"
name = "judge"
[bootstrap]
draws = 500
[run]
backoff_base_s = 0.0
backoff_max_s = 0.0
"""


def replicate_dir(tmp_path: Path) -> Path:
    (tmp_path / "protocol.resolved.toml").write_text(REPLICATE_PROTOCOL)
    (tmp_path / "tables").mkdir()
    rows, labels = original_tables()
    write_answers(tmp_path / "tables" / "answers.jsonl", rows)
    write_labels(tmp_path / "tables" / "labels.jsonl", labels)
    with Ledger(tmp_path / "ledger.sqlite") as ledger:
        for (qid, state), ev in locked_evidence().items():
            assert ev is not None
            key = f"{qid}|{state}|p1"
            aid = ledger.begin_attempt("retrieval", key, "h")
            ledger.finish_and_accept("retrieval", key, aid, {"evidence": {
                "doc_ids": list(ev.doc_ids), "rendered": ev.rendered}})
    return tmp_path
