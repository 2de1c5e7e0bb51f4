"""The warnings read from a run's answers: random (UUID-shaped) document ids."""

from __future__ import annotations

from pathlib import Path

from snapaudit.run.analysis.warnings import protocol_warnings
from snapaudit.run.record.protocol import Protocol, load_protocol
from snapaudit.tables import AnswerRow
from tests.helpers.protocol import python_protocol_text, save_protocol, write_world

UUIDS = ["d9b32c7e-8b1b-4375-805a-3c3e25d14dbe", "0f6a1b2c-3d4e-4f50-8a61-72b3c4d5e6f7"]


def _protocol(tmp: Path) -> Protocol:
    write_world(tmp, n=6)
    return load_protocol(save_protocol(tmp, python_protocol_text('target = "m:f"')))


def _row(q: str, state: str, ids: list[str]) -> AnswerRow:
    return AnswerRow(question_id=q, state=state, repeat=1, answer="a", doc_ids=tuple(ids))


def test_uuid_ids_of_one_state_are_warned_about_with_the_fix(tmp_path: Path) -> None:
    protocol = _protocol(tmp_path)
    rows = [_row("q1", "old", ["p01", "p02"]), _row("q1", "new", ["p01", UUIDS[0]]),
            _row("q2", "new", [UUIDS[1]])]
    assert protocol_warnings(protocol, rows) == ()  # one state mixes stable ids in: no warning
    rows[1] = _row("q1", "new", [UUIDS[0].upper()])
    warnings = protocol_warnings(protocol, rows)
    assert [w.code for w in warnings] == ["unstable_doc_ids", "random_doc_ids"]
    message = warnings[1].message
    assert message.startswith("every document id of new looks like a random UUID (e.g. "
                              "0f6a1b2c-3d4e-4f50-8a61-72b3c4d5e6f7)")
    assert "TextNode(id_=...)" in message and "Document(id=...)" in message


def test_stable_ids_and_no_ids_give_no_warning(tmp_path: Path) -> None:
    protocol = _protocol(tmp_path)
    rows = [_row("q1", "old", ["p01"]), _row("q1", "new", ["p01"]),
            AnswerRow(question_id="q2", state="new", repeat=1, answer="a")]
    assert protocol_warnings(protocol, rows) == ()
    hex32 = [_row("q1", "old", ["d9b32c7e8b1b4375805a3c3e25d14dbe"]), _row("q1", "new", ["x"])]
    assert [w.code for w in protocol_warnings(protocol, hex32)] == \
        ["unstable_doc_ids", "random_doc_ids"]


def _answers(words: dict[str, int]) -> list[AnswerRow]:
    """Two questions x 2 repeats per state, every answer ``words[state]`` words long."""
    return [AnswerRow(question_id=f"q{i}", state=s, repeat=r,
                      answer=" ".join(["word"] * n)) for s, n in words.items()
            for i in (1, 2) for r in (1, 2)]


def test_sentence_answers_without_a_judge_point_to_the_offline_rule_judge(
        tmp_path: Path) -> None:
    protocol = _protocol(tmp_path)
    assert protocol_warnings(protocol, _answers({"old": 5, "new": 5})) == ()  # NQ's 5 tokens
    [warning] = protocol_warnings(protocol, _answers({"old": 6, "new": 2}))
    assert warning.code == "sentence_answers"
    assert warning.message.startswith("the answers are sentences (median words: old 6) "
                                         "and no judge reads them")
    assert "`snapaudit rejudge RUN_DIR --judge rule --gate long-form --out NEW_RUN_DIR`" \
        in warning.message
    judged = load_protocol(save_protocol(
        tmp_path, python_protocol_text('target = "m:f"') + '[judge]\nkind = "rule"\n'))
    assert protocol_warnings(judged, _answers({"old": 6, "new": 6})) == ()


def test_long_answers_without_a_judge_name_the_offline_judge_first(tmp_path: Path) -> None:
    [warning] = protocol_warnings(_protocol(tmp_path), _answers({"old": 9, "new": 12}))
    assert warning.code == "long_answers"
    assert "(median words: new 12, old 9)" in warning.message
    assert "judge them offline (no API key) with the rule judge" in warning.message
    assert warning.message.endswith('paragraphs: set answers.kind = "long" with an LLM '
                                       'judge and gate profile "long-form"')
