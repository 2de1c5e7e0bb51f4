"""Which gate a protocol's run evaluates: the gate's profile defaults from ``[answers] kind``,
and preflight refuses a gate that names a kernel the run cannot produce."""

from __future__ import annotations

from dataclasses import replace

from snapaudit.errors import ProtocolError
from snapaudit.judge.registry import judge_kind
from snapaudit.run.record.protocol import Protocol
from snapaudit.stats.gate import GateConfig, Profile
from snapaudit.systems.config import HttpSystemConfig


def effective_gate(protocol: Protocol) -> GateConfig:
    """The gate with its profile resolved: explicit rules or profile, else by answers.kind."""
    gate = protocol.gate.config()
    if gate.rules is not None or gate.profile is not None:
        return gate
    profile: Profile = "long-form" if protocol.answers.kind == "long" else "study"
    return replace(gate, profile=profile)


def check_evaluable(protocol: Protocol) -> None:
    """ProtocolError unless the run can produce every kernel the gate needs (preflight)."""
    gate = effective_gate(protocol)
    judge = judge_kind(protocol.judge.kind)
    if "semantic" in gate.kernels() and not judge.labels:
        fix = ('[gate] profile = "exact-only" (short answers without a judge)'
               if protocol.answers.kind == "short" else
               '[judge] kind = "llm" with a [judge.generator]')
        raise ProtocolError(
            f"the gate ({gate.describe()}) needs the semantic kernel, but judge.kind = 'none' "
            "produces no pair labels, so the gate could never be evaluated. Set a judge "
            f'([judge] kind = "llm" | "rule" | "labels"), or {fix}.')
    _check_trajectory(protocol, gate)
    if judge.short_only and protocol.answers.kind == "long":
        raise ProtocolError(
            "the rule judge decides short answers and single sentences only; answers.kind = "
            "'long' needs [judge] kind = \"llm\" (the long-form prompt) or kind = \"labels\". "
            "One-sentence answers, offline: keep answers.kind = \"short\" with the rule judge "
            'and [gate] profile = "long-form" (the semantic kernel alone).')


def _check_trajectory(protocol: Protocol, gate: GateConfig) -> None:
    """A gate rule on a trajectory kernel needs a system that reports steps."""
    named = sorted(gate.kernels() - {"exact", "semantic"})
    if not named:
        return
    if protocol.design.looks > 1:
        raise ProtocolError(
            f"the gate names the trajectory kernel(s) {', '.join(named)}, but a sequential "
            "design ([design] looks > 1) gates on the answer kernels only.")
    kind = protocol.system.kind
    unmapped = [s for s, c in protocol.systems.items()
                if isinstance(c, HttpSystemConfig) and c.steps_path is None]
    if kind == "testbed" or (kind == "http" and unmapped):
        where = ("the testbed reports no steps" if kind == "testbed" else
                 f"[systems.{unmapped[0]}] sets no steps_path")
        raise ProtocolError(
            f"the gate names the trajectory kernel(s) {', '.join(named)}, but {where}, so the "
            "gate could never be evaluated. Map the service's steps (steps_path), or gate on "
            "the answer kernels.")
