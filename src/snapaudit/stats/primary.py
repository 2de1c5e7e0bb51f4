"""The semantic kernel an analysis uses: the pair labels validated against the answers, and
the primary judge chosen among the judges that labelled (the configured one, else
``default``, else the first by name)."""

from __future__ import annotations

from collections.abc import Sequence

from snapaudit.errors import ConfigError
from snapaudit.stats.agreement import judges_of
from snapaudit.stats.config import AnalysisConfig
from snapaudit.stats.kernels import AnswerGrid, SemanticKernel
from snapaudit.tables import AnswerRow, LabelTable, PairLabel, validate_labels


def semantic_kernel(grid: AnswerGrid, answers: Sequence[AnswerRow],
                    labels: Sequence[PairLabel], config: AnalysisConfig
                    ) -> tuple[SemanticKernel | None, tuple[str, ...]]:
    """The primary judge's kernel and every judge, after the labels are validated."""
    if not labels:
        return None, ()
    if not (isinstance(labels, LabelTable)
            and labels.clean(None, grid=(grid.index, grid.states, grid.repeats))):
        validate_labels(labels, answers)
    judges = judges_of(labels)
    return SemanticKernel(labels, primary_judge(config, judges)), judges


def primary_judge(config: AnalysisConfig, judges: tuple[str, ...]) -> str:
    if config.primary_judge is not None:
        if config.primary_judge not in judges:
            raise ConfigError(f"primary judge {config.primary_judge!r} has no labels; the "
                              f"labels name {', '.join(judges)}")
        return config.primary_judge
    return "default" if "default" in judges else judges[0]
