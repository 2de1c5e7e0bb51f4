"""Read the analysis part of a results document (docs/results-schema.md) back into the typed
:class:`~snapaudit.stats.analysis.AnalysisResult` it was written from.

Every part is decoded by :mod:`snapaudit.stats.codec` from its own keys; the sections
``to_json`` merges (utility with its bootstrap deltas, the two transition variants, the
secondary results) are split back; the computed keys (``verdict``, ``gate.verdict``,
``sample.warning``, percentages) are recomputed by ``to_json``. The sections a run adds
(``usage``, ``paths``, ``review``, ...) and the whole document are read by
:mod:`snapaudit.results`. A section a document of an earlier release of schema 2 lacks (keys
were added within the version) is read as absent.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from snapaudit.errors import InputError
from snapaudit.stats.agreement import JudgeAgreement
from snapaudit.stats.analysis import SCHEMA_VERSION, AnalysisResult, Comparison, KernelStats
from snapaudit.stats.codec import decode
from snapaudit.stats.conversation import ConversationSection
from snapaudit.stats.fliprates import FlipRates
from snapaudit.stats.flips import Flips
from snapaudit.stats.gate import GateResult
from snapaudit.stats.ladder import Ladder
from snapaudit.stats.metrics import Utility
from snapaudit.stats.multiplicity import Multiplicity
from snapaudit.stats.overlap import Overlap
from snapaudit.stats.permutation import DistributionTest
from snapaudit.stats.power import SampleCheck
from snapaudit.stats.secondary import Secondary
from snapaudit.stats.sequential import Sequential
from snapaudit.stats.trajectory_section import TrajectorySection
from snapaudit.stats.transitions import Transitions
from snapaudit.stats.utility import Delta


def analysis_from_json(data: Mapping[str, Any]) -> AnalysisResult:
    """The typed results of a parsed results document of schema :data:`SCHEMA_VERSION`
    (an :class:`InputError` when it is not one)."""
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise InputError(f"results schema_version {version!r}: this version of snapaudit "
                         f"reads {SCHEMA_VERSION!r}")
    try:
        return _result(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise InputError(f"not a results document of schema {SCHEMA_VERSION}: "
                         f"{exc!r}") from None


def _result(data: Mapping[str, Any]) -> AnalysisResult:
    util = data.get("utility")
    delta = util.get("delta") if isinstance(util, Mapping) else None
    comparison = decode(Comparison, data["comparison"])
    secondary = Secondary(
        comparison.resampled,
        flip_rates=_opt(FlipRates.from_json, data.get("flip_rates")),
        utility_delta=({k: decode(Delta, v) for k, v in delta.items()}
                       if delta is not None else None),
        distribution=_opt(DistributionTest.from_json, data.get("distribution_test")),
        multiplicity=_opt(lambda d: decode(Multiplicity, d), data.get("multiplicity")))
    return AnalysisResult(
        comparison,
        {name: decode(KernelStats, k, kernel=name) for name, k in data["kernels"].items()},
        decode(GateResult, data["gate"]),
        decode(Flips, data["flips"]),
        utility=_opt(Utility.from_json, util),
        transitions=_transitions(data.get("transitions")),
        overlap=_opt(lambda d: decode(Overlap, d), data.get("overlap")),
        ladder=_opt(lambda d: decode(Ladder, d), data.get("ladder")),
        judges=_opt(lambda d: decode(JudgeAgreement, d) if set(d) - {"human"} else None,
                    data.get("judges")),
        secondary=secondary,
        sample=_opt(SampleCheck.from_json, data.get("sample")),
        sequential=_opt(Sequential.from_json, data.get("sequential")),
        trajectory=_opt(TrajectorySection.from_json, data.get("trajectory")),
        conversation=_opt(ConversationSection.from_json, data.get("conversation")))


def _opt(read: Any, raw: Any) -> Any:
    return None if raw is None else read(raw)


def _transitions(raw: Mapping[str, Any] | None) -> dict[str, Transitions] | None:
    """The primary variant and ``exact`` (the primary itself when it is the exact one)."""
    if raw is None:
        return None
    primary = decode(Transitions, raw)
    return {primary.kernel: primary, "exact": decode(Transitions, raw["exact"])}
