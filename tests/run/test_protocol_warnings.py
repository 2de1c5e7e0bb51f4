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
