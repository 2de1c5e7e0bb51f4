"""The ``conversation`` section on the planted conversation world's answers table: each turn's
D and its exact lcb95 as computed by hand (tests/fakes/conversation_world.py), read back
into the same record; absent (and the document unchanged) without turn answers."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from snapaudit.errors import InputError
from snapaudit.stats.analysis import AnalysisConfig, analyze
from snapaudit.stats.analysis_read import analysis_from_json
from snapaudit.tables import read_answers, write_answers
from tests.fakes.conversation_world import EXPECTED, FINAL, conversation_rows

CONFIG = AnalysisConfig(old="old", new="new", draws=200, seed=1)


def _check(section: dict[str, object]) -> None:
    turns = section["turns"]
    assert isinstance(turns, list) and [t["turn"] for t in turns] == [1, 2, 3]
    for t in turns:
        questions, within, cross, d_hat, lcb = EXPECTED[t["turn"]]
        assert t["questions"] == questions
        assert (t["within"], t["cross"], t["d_hat"], t["lcb95"]) == pytest.approx(
            (within, cross, d_hat, lcb)), t["turn"]
        assert t["method"] == "exact"
    final = section["final"]
    assert isinstance(final, dict) and final["turn"] is None
    assert (final["questions"], final["within"], final["cross"], final["d_hat"]) == \
        pytest.approx(FINAL)
    assert (section["conversations"], section["single_turn"]) == (5, 0)


@pytest.mark.parametrize("suffix", ["jsonl", "parquet", "list"])
def test_each_turn_gives_the_planted_numbers(tmp_path: Path, suffix: str) -> None:
    rows = conversation_rows()
    if suffix != "list":
        write_answers(tmp_path / f"a.{suffix}", rows)
        read = read_answers(tmp_path / f"a.{suffix}")
        assert type(read).__name__ == "AnswerTable" and list(read) == rows
        rows = read  # type: ignore[assignment]
    result = analyze(rows, config=CONFIG)
    doc = result.to_json()
    _check(doc["conversation"])  # type: ignore[arg-type]
    # the main kernels are of the final answers
    assert doc["kernels"]["exact"]["d_hat"] == pytest.approx(FINAL[3])  # type: ignore[index]
    back = analysis_from_json(json.loads(json.dumps(doc)))
    assert back.conversation == result.conversation


def test_final_is_the_last_turn_when_all_conversations_are_as_long() -> None:
    rows = [r for r in conversation_rows() if r.question_id != "q004"]
    result = analyze(rows, config=CONFIG)
    section = result.conversation
    assert section is not None and section.final == section.turns[-1]
    assert section.final.turn == 3
    # every question is a conversation: the final turn is the main exact kernel, bounds too
    # (both upper bounds count the pseudo-question of stats/upper.py)
    assert section.final.exact == result.kernels["exact"]


def test_single_turn_questions_are_counted_apart() -> None:
    rows = [r if r.question_id != "q004" else replace(r, turn_answers=None)
            for r in conversation_rows()]
    section = analyze(rows, config=CONFIG).to_json()["conversation"]
    assert (section["conversations"], section["single_turn"]) == (4, 1)  # type: ignore[index]
    assert [t["questions"] for t in section["turns"]] == [4, 4, 4]  # type: ignore[index]


def test_without_turn_answers_the_document_is_unchanged() -> None:
    rows = conversation_rows()
    plain = [replace(r, turn_answers=None) for r in rows]
    doc = analyze(plain, config=CONFIG).to_json()
    assert "conversation" not in doc
    # the turn answers add their section and change nothing else, byte for byte
    talk = analyze(rows, config=CONFIG).to_json()
    assert talk.pop("conversation")
    assert json.dumps(talk, sort_keys=True) == json.dumps(doc, sort_keys=True)


def test_rows_of_one_question_must_agree_on_its_turns() -> None:
    rows = conversation_rows()
    rows[0] = replace(rows[0], turn_answers=rows[0].turn_answers[1:])  # type: ignore[index]
    with pytest.raises(InputError, match="'q000': its answer rows carry turn answers for "
                                         "2 and 3 turns"):
        analyze(rows, config=CONFIG)


@pytest.mark.parametrize(("value", "message"), [
    ("x", "'turn_answers' must be a list of strings, got str"),
    ([], "'turn_answers' is empty"),
    (["a", " "], r"turn_answers\[1\] is blank"),
    (["a", 3], r"turn_answers\[1\] must be a string, got int"),
    (["a", "c"], "'answer' must equal the last of 'turn_answers'"),
    (["b"] * 65, "'turn_answers' has 65 turns; at most 64"),
])
def test_bad_turn_answers_in_a_table_are_one_line_errors(tmp_path: Path, value: object,
                                                         message: str) -> None:
    path = tmp_path / "a.jsonl"
    lines = [{"question_id": "q", "state": s, "repeat": r, "answer": "b"}
             for s in ("old", "new") for r in (1, 2)]
    lines[2]["turn_answers"] = value
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    with pytest.raises(InputError, match=message) as err:
        read_answers(path)
    assert "a.jsonl:3: " in str(err.value) and "\n" not in str(err.value)


def test_analyze_reports_each_turn(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tests.helpers.cli import exit_code

    write_answers(tmp_path / "a.jsonl", conversation_rows())
    argv = ["analyze", "--answers", str(tmp_path / "a.jsonl"), "--old", "old", "--new", "new",
            "--gate-profile", "exact-only", "--draws", "200", "--json", str(tmp_path / "r.json")]
    assert exit_code(argv) == 0  # excess churn not shown at 5 questions (lcb95 -20 pp)
    _check(json.loads((tmp_path / "r.json").read_text())["conversation"])
    out = capsys.readouterr().out
    assert "Excess churn per conversation turn (5 conversations" in out
    rows = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text().splitlines()]
    rows[5]["turn_answers"] = [*rows[5]["turn_answers"][:-1], "other"]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert exit_code(argv) == 2
    err = capsys.readouterr().err
    assert "a.jsonl:6: 'answer' must equal the last of 'turn_answers'" in err
    assert "Traceback" not in err


def test_clustered_questions_resample_their_clusters_per_turn() -> None:
    rows = [replace(r, cluster="a" if r.question_id < "q002" else "b")
            for r in conversation_rows()]
    section = analyze(rows, config=CONFIG).conversation
    assert section is not None
    assert [t.exact.method for t in section.turns] == ["draws"] * 3
    # the point estimates do not depend on the resampled unit
    assert [t.exact.d_hat for t in section.turns] == pytest.approx([0.0, 60.0, -12.5])
