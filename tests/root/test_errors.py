from __future__ import annotations

from snapaudit.errors import (
    InputError,
    IntegrityError,
    ProtocolMismatchError,
    RetriesExhaustedError,
    SnapauditError,
    VerificationError,
)


def test_input_error_names_file_and_line() -> None:
    err = InputError("duplicate row", path="a.jsonl", line=7)
    assert str(err) == "a.jsonl:7: duplicate row"
    assert isinstance(err, SnapauditError)


def test_protocol_mismatch_lists_fields_and_is_integrity() -> None:
    err = ProtocolMismatchError(["states.new", "design.repeats"])
    assert isinstance(err, IntegrityError)
    assert "states.new, design.repeats" in str(err)


def test_exit_codes() -> None:
    assert RetriesExhaustedError("answer", ["q1"]).exit_code == 2
    assert VerificationError(["kernels.exact.d_hat"]).exit_code == 3
