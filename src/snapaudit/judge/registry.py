"""Judges by kind, imported lazily: ``build_judge(JudgeConfig) -> Judge``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from snapaudit.errors import ConfigError
from snapaudit.judge.base import Judge
from snapaudit.judge.config import JudgeConfig

if TYPE_CHECKING:
    from snapaudit.systems.resources import RunResources


def build_judge(config: JudgeConfig, resources: RunResources | None = None) -> Judge:
    """The judge of ``config``: ``llm`` (any generator backend; ``resources``: the run's, for
    its shared generator and replica pools) or ``rule`` (offline)."""
    if config.kind == "llm":
        from snapaudit.judge.llm import LLMJudge

        return LLMJudge(config, resources=resources)
    if config.kind == "rule":
        from snapaudit.judge.rule import RuleJudge

        return RuleJudge(config)
    raise ConfigError(
        f"judge.kind = {config.kind!r} has no judge to build (use 'llm' or 'rule')"
    )
