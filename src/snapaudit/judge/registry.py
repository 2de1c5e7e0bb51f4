"""Judges by kind, imported lazily: ``build_judge(JudgeConfig) -> Judge``."""

from __future__ import annotations

from snapaudit.errors import ConfigError
from snapaudit.judge.base import Judge
from snapaudit.judge.config import JudgeConfig


def build_judge(config: JudgeConfig) -> Judge:
    """The judge of ``config``: ``llm`` (any generator backend) or ``rule`` (offline)."""
    if config.kind == "llm":
        from snapaudit.judge.llm import LLMJudge

        return LLMJudge(config)
    if config.kind == "rule":
        from snapaudit.judge.rule import RuleJudge

        return RuleJudge(config)
    raise ConfigError(
        f"judge.kind = {config.kind!r} has no judge to build (use 'llm' or 'rule')"
    )
