"""What an answer may be (``[answers]``), and which gate a protocol's run can evaluate.

``[answers] kind`` says whether the systems give short answers (a name, a date: the study's
testbed) or long-form ones (paragraphs). ``max_bytes`` caps an accepted answer; an oversized
answer is a transport-invalid attempt whose reason gives its size. The gate's profile defaults
from the kind, and preflight refuses a gate that names a kernel the run cannot produce.
"""

from __future__ import annotations

from snapaudit.errors import ProtocolError, TransportInvalid
from snapaudit.run.protocol import AnswersConfig, Protocol
from snapaudit.stats.gate import GateConfig

__all__ = ["AnswersConfig", "check_evaluable", "effective_gate", "max_answer_bytes",
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
        raise TransportInvalid("empty_answer")
    size = len(answer.encode("utf-8"))
    if size > max_bytes:
        raise TransportInvalid("oversized_answer",
                               detail=f"{size} bytes > answers.max_bytes = {max_bytes}")


def effective_gate(protocol: Protocol) -> GateConfig:
    """The gate with its profile resolved: explicit rules or profile, else by answers.kind."""
    gate = protocol.gate
    if gate.rules is not None or gate.profile is not None:
        return gate
    profile = "long-form" if protocol.answers.kind == "long" else "study"
    return gate.model_copy(update={"profile": profile})


def check_evaluable(protocol: Protocol) -> None:
    """ProtocolError unless the run can produce every kernel the gate needs (preflight)."""
    gate = effective_gate(protocol)
    judge = protocol.judge
    if "semantic" in gate.kernels() and judge.kind == "none":
        fix = ('[gate] profile = "exact-only" (short answers without a judge)'
               if protocol.answers.kind == "short" else
               '[judge] kind = "llm" with a [judge.generator]')
        raise ProtocolError(
            f"the gate ({gate.describe()}) needs the semantic kernel, but judge.kind = 'none' "
            "produces no pair labels, so the gate could never be evaluated. Set a judge "
            f'([judge] kind = "llm" | "rule" | "labels"), or {fix}.')
    if judge.kind == "rule" and protocol.answers.kind == "long":
        raise ProtocolError(
            "the rule judge decides short answers only; answers.kind = 'long' needs "
            '[judge] kind = "llm" (the long-form prompt) or kind = "labels".')
