""":class:`RunResults`: the one typed record of ``results.json``.

The analysis (:class:`~snapaudit.stats.analysis.AnalysisResult`) plus the sections a run
adds, each typed: ``usage`` (:class:`~snapaudit.results.sections.Usage`), ``paths``
(:class:`~snapaudit.stats.paths.PathsResult`), ``warnings``
(:class:`~snapaudit.results.sections.ProtocolWarning`), ``review``
(:class:`~snapaudit.results.sections.ReviewSummary`), ``attribution``
(:class:`~snapaudit.stats.attribution.AttributionSection`) and the human judges
(``judges.human``, :class:`~snapaudit.stats.human_agreement.HumanJudges`). A section a run
has not got is None (``warnings``: empty) and is not written, so an analysis alone
(``snapaudit analyze --json``) is a results document too. Read and written only by
:mod:`snapaudit.results.io`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from snapaudit.results.sections import ProtocolWarning, ReviewSummary, Usage
from snapaudit.stats.analysis import AnalysisResult
from snapaudit.stats.attribution import AttributionSection
from snapaudit.stats.human_agreement import HumanJudges
from snapaudit.stats.paths import PathsResult
from snapaudit.stats.verdict import Verdict

# the top-level keys of the sections, in the order they are written
SECTION_KEYS = ("usage", "paths", "warnings", "review", "attribution")


@dataclass(frozen=True)
class RunResults:
    """``results.json``: the analysis and the run's typed sections."""

    analysis: AnalysisResult
    usage: Usage | None = None
    paths: PathsResult | None = None
    warnings: tuple[ProtocolWarning, ...] = ()
    review: ReviewSummary | None = None
    attribution: AttributionSection | None = None
    human: HumanJudges | None = None  # written as ``judges.human``

    def verdict(self) -> Verdict:
        """The verdict every output prints, from the typed gate (never from JSON)."""
        return self.analysis.verdict()

    def with_sections(self, **sections: Any) -> RunResults:
        """A copy with the given sections replaced (e.g. ``attribution=...``)."""
        return replace(self, **sections)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = self.analysis.to_json()
        if self.human is not None:
            out["judges"] = {**(out["judges"] or {}), "human": self.human.to_json()}
        sections: Mapping[str, Any] = {
            "usage": self.usage.to_json() if self.usage else None,
            "paths": self.paths.to_json() if self.paths else None,
            "warnings": [w.to_json() for w in self.warnings] or None,
            "review": self.review.to_json() if self.review else None,
            "attribution": self.attribution.to_json() if self.attribution else None}
        out.update({k: v for k, v in sections.items() if v is not None})
        return out
