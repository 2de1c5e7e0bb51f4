"""Read and write ``results.json``: the one place that does either.

:func:`write_results` writes a :class:`~snapaudit.results.record.RunResults` atomically (a
kill leaves the old document or the new one, never a partial one), with sorted keys, so
equal results are equal bytes. :func:`read_results` reads a document back into the same
record and refuses one that is not self-consistent (a computed key such as ``verdict``
that disagrees with the rest, a key the schema does not name).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from snapaudit import atomic
from snapaudit.errors import InputError
from snapaudit.results.record import SECTION_KEYS, RunResults
from snapaudit.results.sections import ProtocolWarning, ReviewSummary, StageUsage, Usage
from snapaudit.stats.analysis import AnalysisResult
from snapaudit.stats.analysis_read import analysis_from_json
from snapaudit.stats.attribution import AttributionSection
from snapaudit.stats.codec import decode
from snapaudit.stats.human_agreement import HumanJudges
from snapaudit.stats.paths import PathsResult

# every top-level key of the analysis
ANALYSIS_KEYS = ("schema_version", "comparison", "kernels", "gate", "utility", "flips",
                 "flip_rates", "transitions", "overlap", "ladder", "judges",
                 "distribution_test", "multiplicity", "sample", "sequential", "trajectory",
                 "conversation", "verdict")


def write_results(path: str | Path, results: RunResults) -> Path:
    """Write ``results`` to ``path`` atomically; return the path."""
    text = json.dumps(results.to_json(), indent=2, sort_keys=True, ensure_ascii=False,
                      allow_nan=False)
    return atomic.write_text(path, text + "\n")


def read_results(path: str | Path) -> RunResults:
    """The typed results of a results JSON file (``snapaudit analyze --json``, or
    ``DIR/results.json`` of ``snapaudit run``)."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError("results file not found", path=str(path)) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"not valid JSON: {exc}", path=str(path)) from None
    if not isinstance(data, dict):
        raise InputError("expected a JSON object", path=str(path))
    try:
        return checked_results(data)
    except InputError as exc:
        raise InputError(str(exc), path=str(path)) from None


def checked_results(data: Mapping[str, Any]) -> RunResults:
    """:func:`results_from_json`, refused unless writing it back gives ``data`` (keys
    added within the schema version may be absent)."""
    unknown = sorted(set(data) - set(ANALYSIS_KEYS) - set(SECTION_KEYS))
    if unknown:
        raise InputError(f"results: unknown key(s) {', '.join(unknown)}")
    result = results_from_json(data)
    written = result.to_json()
    differ = [k for k in data if k not in written or not _agrees(data[k], written[k])]
    if differ:  # a computed key (verdict, gate.verdict, ...) disagrees with the rest
        raise InputError(f"results are not self-consistent: {', '.join(differ)} do not match "
                         "what the other keys give")
    return result


def results_from_json(data: Mapping[str, Any]) -> RunResults:
    """The typed record of a parsed results document (an InputError when it is not one)."""
    analysis = analysis_from_json(data)
    try:
        return _sections(analysis, data)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
        raise InputError(f"results: a section is malformed: {exc!r}") from None


def _sections(analysis: AnalysisResult, data: Mapping[str, Any]) -> RunResults:
    judges = data.get("judges")
    human = judges.get("human") if isinstance(judges, Mapping) else None
    usage = data.get("usage")
    return RunResults(
        analysis,
        usage=(Usage.of({k: decode(StageUsage, v) for k, v in usage["stages"].items()})
               if usage is not None else None),
        paths=PathsResult.from_json(data["paths"]) if data.get("paths") else None,
        warnings=tuple(decode(ProtocolWarning, w) for w in data.get("warnings") or ()),
        review=ReviewSummary.from_json(data["review"]) if data.get("review") else None,
        attribution=(AttributionSection.from_json(data["attribution"])
                     if data.get("attribution") else None),
        human=HumanJudges.from_json(human) if human is not None else None)


def _agrees(given: Any, written: Any) -> bool:
    """``given`` equals ``written`` except for keys ``given`` lacks (keys added within the
    schema version, e.g. a bootstrap ``method``: an earlier release wrote no such key)."""
    if isinstance(given, dict) and isinstance(written, dict):
        return all(k in written and _agrees(v, written[k]) for k, v in given.items())
    if isinstance(given, list) and isinstance(written, list):
        return len(given) == len(written) and all(map(_agrees, given, written))
    return bool(given == written)
