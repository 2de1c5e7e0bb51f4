"""Protocol section for the semantic judge (``[judge]``). Owned by the judge."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator

from snapaudit._model import Frozen
from snapaudit.names import check_name
from snapaudit.testbed.generate.config import GeneratorConfig


class JudgeConfig(Frozen):
    # none: exact kernel only; labels: import pair labels from a file;
    # llm: a generator backend judges blind packets; rule: the transparent offline judge.
    kind: Literal["none", "labels", "llm", "rule"] = "none"
    name: str = "judge"
    labels_path: str | None = None
    scope: Literal["all", "endpoints"] = "all"
    generator: GeneratorConfig | None = None
    # rule judge only: decide the pairs the rules leave open with all-MiniLM-L6-v2
    # cosine >= this threshold (None: open pairs are "different"; no model is loaded).
    rule_embedding_threshold: float | None = Field(default=None, ge=-1.0, le=1.0)
    # llm judge only: the completion budget is 64 + tokens_per_pair * pairs.
    tokens_per_pair: int = Field(default=24, ge=8, le=256)
    # llm judge only: the instructions for short answers or long-form ones
    # (auto: by [answers] kind).
    prompt: Literal["auto", "short", "long"] = "auto"
    # split a question's packet into smaller blind packets when its estimated prompt tokens
    # would pass this budget (None: one packet per question); see snapaudit.judge.split.
    max_packet_tokens: int | None = Field(default=None, ge=500)

    @field_validator("name")
    @classmethod
    def _name(cls, value: str) -> str:
        # The name becomes a ledger stage (judge:<name>) and file names (export, audits).
        return check_name(value, "judge name")
