"""The public Python API is importable from the package root."""

from __future__ import annotations

import pytest

import snapaudit


def test_root_exports_resolve() -> None:
    for name in snapaudit.__all__:
        assert getattr(snapaudit, name) is not None, name
    assert snapaudit.analyze.__module__ == "snapaudit.stats.analysis"
    assert snapaudit.read_answers.__module__ == "snapaudit.tables.answers"
    assert snapaudit.read_results.__module__ == "snapaudit.results.io"
    import inspect

    assert inspect.iscoroutinefunction(snapaudit.aaudit)
    assert snapaudit.aaudit.__module__ == snapaudit.audit.__module__ == "snapaudit.run.api"


def test_unknown_export_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = snapaudit.nope
