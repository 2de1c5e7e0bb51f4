"""``results.json`` as one typed record: :class:`RunResults` (the analysis and the sections
a run adds), read and written only here (:func:`read_results`, :func:`write_results`).

The engine, ``snapaudit attribute``, ``analyze``, ``import``, the report, ``plan`` and the
artifact's verifier all go through this package; none of them patches the document by key.
"""

from snapaudit.results.io import (
    checked_results,
    read_results,
    results_from_json,
    write_results,
)
from snapaudit.results.record import RunResults
from snapaudit.results.sections import (
    AnnotatorCounts,
    ProtocolWarning,
    Regression,
    ReviewSummary,
    StageUsage,
    Usage,
    UsageTotal,
)

__all__ = ["AnnotatorCounts", "ProtocolWarning", "Regression", "ReviewSummary", "RunResults",
           "StageUsage", "Usage", "UsageTotal", "checked_results", "read_results",
           "results_from_json", "write_results"]
