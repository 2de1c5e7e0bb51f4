"""Judges by kind, imported lazily: ``build_judge(JudgeConfig) -> Judge``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from snapaudit.errors import ConfigError
from snapaudit.judge.base import Judge
from snapaudit.judge.config import JudgeConfig
from snapaudit.registry import Registry

# kinds "none" and "labels" are handled by the engine and build no judge
JUDGES: Registry[Judge] = Registry("judge kind", {
    "llm": "snapaudit.judge.llm:LLMJudge",
    "rule": "snapaudit.judge.rule:RuleJudge",
})

if TYPE_CHECKING:
    from snapaudit.systems.resources import RunResources


def build_judge(config: JudgeConfig, resources: RunResources | None = None) -> Judge:
    """The judge of ``config``: ``llm`` (any generator backend; ``resources``: the run's, for
    its shared generator and replica pools) or ``rule`` (offline)."""
    if config.kind not in JUDGES:
        raise ConfigError(f"judge.kind = {config.kind!r} has no judge to build "
                          f"(use {' or '.join(repr(k) for k in JUDGES.kinds())})")
    return JUDGES.build(config.kind, config, resources=resources)
