"""What an answer may be (``[answers]``).

``[answers] kind`` says whether the systems give short answers (a name, a date: the study's
testbed) or long-form ones (paragraphs). ``max_bytes`` caps an accepted answer; an oversized
answer is a transport-invalid attempt whose reason gives its size. Which gate a run can
evaluate is :mod:`snapaudit.run.gate_profile`.
"""

from __future__ import annotations

from snapaudit.errors import TransportInvalid
from snapaudit.reasons import FailureReason
from snapaudit.run.record.protocol import AnswersConfig, Protocol

__all__ = ["SERVICE_MAX_BYTES", "TESTBED_MAX_BYTES", "AnswersConfig", "max_answer_bytes",
           "validate_answer"]

TESTBED_MAX_BYTES = 512
SERVICE_MAX_BYTES = 65_536


def max_answer_bytes(protocol: Protocol) -> int:
    cfg = protocol.answers
    if cfg.max_bytes is not None:
        return cfg.max_bytes
    return TESTBED_MAX_BYTES if protocol.system.kind == "testbed" else SERVICE_MAX_BYTES


def validate_answer(answer: str, max_bytes: int = TESTBED_MAX_BYTES) -> None:
    """Accept any nonempty answer of at most ``max_bytes`` UTF-8 bytes; else TransportInvalid."""
    if not answer.strip():
        raise TransportInvalid(FailureReason.EMPTY_ANSWER)
    size = len(answer.encode("utf-8"))
    if size > max_bytes:
        raise TransportInvalid(FailureReason.OVERSIZED_ANSWER,
                               detail=f"{size} bytes > answers.max_bytes = {max_bytes}")
