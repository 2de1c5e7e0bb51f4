"""The protocol's ``[gate]`` table: validated by pydantic as before, built into the analysis's
:class:`~snapaudit.stats.gate.GateConfig` (a dataclass, so ``snapaudit analyze`` imports no
pydantic). The fields, defaults, bounds and messages are the gate's own; the protocol's dump,
and so its hash, is what the pydantic ``GateConfig`` gave."""

from __future__ import annotations

from typing import Any

from pydantic import Field, SerializerFunctionWrapHandler, model_serializer

from snapaudit._model import Frozen
from snapaudit.stats.gate import GateConfig, GateRule, Kernel, Op, Profile, Statistic


class GateRuleSpec(Frozen):
    """One rule of ``[[gate.rules]]``, e.g. ``exact lcb95 > 0``."""

    kernel: Kernel
    statistic: Statistic
    op: Op
    threshold: float


class GateSpec(Frozen):
    """``[gate]``: a profile and its minimum D, or explicit rules."""

    profile: Profile | None = None
    min_d_pp: float = Field(default=3.0, ge=0.0)
    rules: tuple[GateRuleSpec, ...] | None = Field(default=None, min_length=1)
    # COMPATIBLE when every gate kernel's ucb95 is below it (pp); none: no such verdict
    margin_pp: float | None = Field(default=None, gt=0.0, lt=100.0)

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """No margin is left out, so protocols without one keep their hashes."""
        data: dict[str, Any] = handler(self)
        if data.get("margin_pp") is None:
            data.pop("margin_pp", None)
        return data

    def config(self) -> GateConfig:
        """The analysis's gate of this table."""
        rules = None if self.rules is None else tuple(
            GateRule(kernel=r.kernel, statistic=r.statistic, op=r.op, threshold=r.threshold)
            for r in self.rules)
        return GateConfig(profile=self.profile, min_d_pp=self.min_d_pp, rules=rules,
                          margin_pp=self.margin_pp)
