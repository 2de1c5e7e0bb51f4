"""snapaudit: the Snapshot Compatibility Audit for retrieval-augmented QA systems.

Does a new snapshot of a RAG system (a refreshed index, a bigger corpus, a
swapped retriever) still give the same answers as the old one, beyond the noise
the same snapshot shows when asked twice?

The public API is re-exported here lazily; submodules are private unless
listed in ``__all__``.
"""

from __future__ import annotations

import importlib
from typing import Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    "analyze": "snapaudit.stats.analysis",
    "AnalysisConfig": "snapaudit.stats.analysis",
    "AnalysisResult": "snapaudit.stats.analysis",
    "read_results": "snapaudit.results",
    "RunResults": "snapaudit.results",
    "AnswerRow": "snapaudit.tables",
    "AnswerRef": "snapaudit.tables",
    "PairLabel": "snapaudit.tables",
    "GoldRow": "snapaudit.tables",
    "read_answers": "snapaudit.tables",
    "read_labels": "snapaudit.tables",
    "read_gold": "snapaudit.tables",
    "write_answers": "snapaudit.tables",
    "write_labels": "snapaudit.tables",
    "write_gold": "snapaudit.tables",
    "RunDir": "snapaudit.run.record.rundir",
    "audit": "snapaudit.run.api",
    "aaudit": "snapaudit.run.api",
    "Protocol": "snapaudit.run.record.protocol",
    "load_protocol": "snapaudit.run.record.protocol",
    "PythonCall": "snapaudit.systems.python",
    "SnapauditError": "snapaudit.errors",
    "InputError": "snapaudit.errors",
    "IntegrityError": "snapaudit.errors",
}

__all__ = ["__version__", *sorted(_EXPORTS)]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'snapaudit' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
