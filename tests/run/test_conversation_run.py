"""Conversations audited end to end: the planted conversation world
(tests/fakes/conversation_world.py) through a real run of a Python target and of an HTTP
service; the turn answers are stored in the ledger cells, bound by the answer lock, written
to ``tables/answers.jsonl``, exported and verified, and a killed run resumes to the
uninterrupted run's cells; every route gives the hand-computed D of each turn."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import snapaudit
from snapaudit.artifact.export import export_artifact
from snapaudit.artifact.verify import verify_artifact
from snapaudit.errors import VerificationError
from snapaudit.hashing import sha256_file
from tests.fakes.conversation_world import (
    EXPECTED,
    FINAL,
    QUESTIONS,
    TalkService,
    turns_of,
    write_conversations,
)
from tests.helpers.ledger_view import query
from tests.helpers.protocol import python_protocol_text, save_protocol


def _check(results: dict[str, Any]) -> None:
    section = results["conversation"]
    got = [(t["questions"], t["within"], t["cross"], t["d_hat"], t["lcb95"])
           for t in section["turns"]]
    assert got == [pytest.approx(EXPECTED[j]) for j in (1, 2, 3)]
    final = section["final"]
    assert (final["questions"], final["within"], final["cross"], final["d_hat"]) == \
        pytest.approx(FINAL)
    assert results["kernels"]["exact"]["d_hat"] == pytest.approx(FINAL[3])


def _protocol(tmp: Path, target: str) -> Path:
    write_conversations(tmp)
    text = python_protocol_text(f'target = "{target}"').replace("size = 6", "size = 5")
    return save_protocol(tmp, text)


@pytest.fixture(scope="module")
def python_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("talk")
    snapaudit.audit(_protocol(tmp, "tests.fakes.conversation_world:talker"), tmp / "run")
    return tmp / "run"


def test_python_target_gives_each_turns_planted_numbers(python_run: Path) -> None:
    _check(json.loads((python_run / "results.json").read_text()))
    cells = query(python_run / "ledger.sqlite",
                  "SELECT payload FROM cells WHERE stage='answer' AND cell_key='q004|new|2'")
    assert json.loads(cells[0][0]) == {"answer": "new-2", "doc_ids": None,
                                       "turn_answers": ["answer 1", "new-2"]}
    rows = [json.loads(x) for x in
            (python_run / "tables" / "answers.jsonl").read_text().splitlines()]
    assert len(rows) == 20
    assert {r["question_id"]: len(r["turn_answers"]) for r in rows} == {
        q: len(turns_of(q)) for q in QUESTIONS}


def test_an_http_service_gets_the_turns_and_gives_the_same_numbers(tmp_path: Path) -> None:
    write_conversations(tmp_path)
    with TalkService(broken=frozenset({"q002"})) as svc:
        systems = "".join(
            f'[systems.{s}]\nurl = "{svc.url(s)}"\nanswer_path = "reply.final"\n'
            'turn_answers_path = "reply.per_turn"\ndoc_ids_path = ""\n'
            'body_template = { question_id = "{question_id}", repeat = "{repeat}" }\n'
            for s in ("old", "new"))
        text = python_protocol_text("").replace("size = 6", "size = 5").replace(
            'kind = "python"\n[systems.old]\n\n[systems.new]\n\n', f'kind = "http"\n{systems}')
        snapaudit.audit(save_protocol(tmp_path, text), tmp_path / "run")
        requests = list(svc.requests)
    _check(json.loads((tmp_path / "run" / "results.json").read_text()))
    assert len(requests) == 21  # q002's first reply lacked an answer: one schema attempt
    assert all(r["turns"] == turns_of(r["question_id"]) for r in requests)
    failed = query(tmp_path / "run" / "ledger.sqlite",
                   "SELECT cell_key, reason, error FROM attempts WHERE reason IS NOT NULL")
    assert len(failed) == 1 and failed[0][0].startswith("q002|") and failed[0][1] == "schema"
    assert "'turn_answers' has 2 answer(s) for 3 turn(s)" in failed[0][2]


def test_a_target_in_worker_processes_gets_the_turns(tmp_path: Path) -> None:
    proto = _protocol(tmp_path, "tests.fakes.conversation_world:talker")
    proto.write_text(proto.read_text().replace(
        'target = "tests.fakes.conversation_world:talker"',
        'target = "tests.fakes.conversation_world:talker"\nisolation = "process"\n'
        "max_concurrency = 2"))
    snapaudit.audit(proto, tmp_path / "run")
    _check(json.loads((tmp_path / "run" / "results.json").read_text()))


def _rehash(root: Path) -> None:
    manifest = json.loads((root / "manifest.json").read_text())
    manifest["files"] = {f: sha256_file(root / f) for f in manifest["files"]}
    (root / "manifest.json").write_text(json.dumps(manifest))


def test_turn_answers_are_exported_and_verified(python_run: Path, tmp_path: Path) -> None:
    art = export_artifact(python_run, tmp_path / "art")
    assert not verify_artifact(art).failures
    claims = {c["claim"] for c in json.loads((art / "claims.json").read_text())}
    assert {"conversation.final.d_hat", "conversation.conversations"} <= claims
    assert any(c == "conversation.turns[1].lcb95" for c in claims)
    # an edited turn answer in the table (manifest forged) differs from the ledger
    forged = tmp_path / "forged"
    shutil.copytree(art, forged)
    path = forged / "tables" / "answers.jsonl"
    rows = [json.loads(x) for x in path.read_text().splitlines()]
    rows[0]["turn_answers"][0] = "another answer"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _rehash(forged)
    with pytest.raises(VerificationError, match="differs from the answer ledger"):
        verify_artifact(forged)
    # an edited turn answer in the ledger breaks the answer lock
    cells = art / "ledger" / "answer.cells.jsonl"
    lines = cells.read_text().splitlines()
    cell = json.loads(lines[0])
    cell["payload"]["turn_answers"][0] = "forged"
    lines[0] = json.dumps(cell)
    cells.write_text("\n".join(lines) + "\n")
    _rehash(art)
    with pytest.raises(VerificationError, match="answer lock"):
        verify_artifact(art)


@pytest.mark.slow
def test_a_killed_conversation_run_resumes_to_the_uninterrupted_cells(tmp_path: Path) -> None:
    from tests.helpers.cli import killed_and_clean

    def protocol(name: str, delay: float) -> Path:
        proto = _protocol(tmp_path, "tests.fakes.conversation_world:sampled_talker")
        text = proto.read_text().replace(
            'target = "tests.fakes.conversation_world:sampled_talker"',
            f'target = "tests.fakes.conversation_world:sampled_talker"\n'
            f"kwargs = {{ delay_s = {delay} }}").replace("[run]\n", "[run]\nconcurrency = 1\n")
        return save_protocol(tmp_path, text).rename(tmp_path / name)

    killed, clean = killed_and_clean(protocol, tmp_path)
    assert killed == clean and all("turn_answers" in p for p in clean.values())
    run_dir = tmp_path / "killed"
    assert json.loads((run_dir / "results.json").read_text())["conversation"] == json.loads(
        (tmp_path / "clean" / "results.json").read_text())["conversation"]


@pytest.mark.parametrize(("turns", "message"), [
    ([], "'turns' is empty: give at least one turn"),
    ("hello", "'turns' must be a list of strings, got str"),
    (["hi", 3], "turns[1] must be a string, got int"),
    (["hi", "  "], "turns[1] is blank"),
    (["x"] * 65, "'turns' has 65 turns; at most 64"),
    (["x" * 70000], "turns[0] has 70000 bytes; at most 65536"),
])
def test_bad_turns_in_the_cohort_are_one_line_errors(tmp_path: Path, turns: object,
                                                     message: str,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    from tests.helpers.cli import exit_code

    proto = _protocol(tmp_path, "tests.fakes.conversation_world:talker")
    lines = (tmp_path / "questions.jsonl").read_text().splitlines()
    first = json.loads(lines[1])
    lines[1] = json.dumps({**first, "turns": turns})
    (tmp_path / "questions.jsonl").write_text("\n".join(lines) + "\n")
    assert exit_code(["run", str(proto), "--run-dir", str(tmp_path / "run"),
                      "--progress", "silent"]) == 2
    err = capsys.readouterr().err.strip()
    assert "questions.jsonl:2: " + message in err and "Traceback" not in err
    assert not (tmp_path / "run" / "ledger.sqlite").exists()


def test_the_testbed_refuses_conversations(tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    from tests.helpers.cli import exit_code
    from tests.helpers.protocol import write_testbed_protocol, write_testbed_world

    corpus = write_testbed_world(tmp_path)
    path = tmp_path / "questions.jsonl"
    path.write_text("".join(json.dumps({**json.loads(x), "turns": ["a", "b"]}) + "\n"
                            for x in path.read_text().splitlines()))
    proto = write_testbed_protocol(tmp_path, corpus, 'backend = "openai"\nmodel = "m"\n'
                                   'base_url = "http://127.0.0.1:9/v1"')
    assert exit_code(["run", str(proto), "--run-dir", str(tmp_path / "run"),
                      "--progress", "silent"]) == 2
    err = capsys.readouterr().err
    assert "is a conversation" in err and "the built-in testbed answers single questions" \
        in err and "Traceback" not in err


def test_the_report_and_the_summary_show_each_turn(python_run: Path, tmp_path: Path) -> None:
    from snapaudit.report.build import write_report
    from snapaudit.report.summary import run_summary
    from snapaudit.results import read_results

    paths = write_report(python_run, tmp_path)
    md = re.sub(r"` ?([^`]*?) ?`", r"\1", Path(paths.markdown).read_text())
    assert "## Conversations" in md
    assert "| 2 | 5 | 100.00 | 40.00 | 60.00 | 20.00 | [20.00, 100.00] |" in md
    assert "| final | 5 | 80.00 | 70.00 | 10.00 | -20.00 |" in md
    text = run_summary(python_run, read_results(python_run / "results.json"))
    assert "Excess churn per conversation turn (5 conversations" in text
    line = next(x for x in text.splitlines() if x.startswith("3 "))
    assert line.split()[:6] == ["3", "4", "75.00", "87.50", "-12.50", "-37.50"]


def test_attribution_refuses_a_conversation_run(python_run: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    from tests.helpers.cli import exit_code

    assert exit_code(["attribute", str(python_run), "--progress", "silent"]) == 2
    err = capsys.readouterr().err
    assert "attribution answers single questions; 5 cohort question(s) are conversations" \
        in err and "Traceback" not in err
