"""Protocol section for the semantic judge (``[judge]``). Owned by the judge."""

from __future__ import annotations

from typing import Literal

from snapaudit._model import Frozen
from snapaudit.generate.config import GeneratorConfig


class JudgeConfig(Frozen):
    # none: exact kernel only; labels: import pair labels from a file;
    # llm: a generator backend judges blind packets; rule: the transparent offline judge.
    kind: Literal["none", "labels", "llm", "rule"] = "none"
    name: str = "judge"
    labels_path: str | None = None
    scope: Literal["all", "endpoints"] = "all"
    generator: GeneratorConfig | None = None
