"""The report states how often the judge labelled normalization-identical answers "same"."""

from __future__ import annotations

from snapaudit.stats.analysis import AnalysisConfig, analyze
from tests.stats._analysis_helpers import labels_from_groups, rows


def test_identical_pairs_and_how_many_were_labelled_same() -> None:
    # old: "Paris", "the Paris." (NQ-normalized both "paris"); new: "PARIS", "Lyon"
    answers = rows({"q1": {"A": ["Paris", "the Paris."], "B": ["PARIS", "Lyon"]}})
    # identical after normalization: A1-A2, A1-B1, A2-B1 (3 pairs); the judge calls
    # A1-A2 different (inconsistent) and the other two the same
    labels = labels_from_groups("q1", {"A1": "p", "A2": "p", "B1": "p", "B2": "l"},
                                override={("A1", "A2"): False})
    result = analyze(answers, config=AnalysisConfig(old="A", new="B", draws=200),
                     labels=labels)
    sem = result.to_json()["kernels"]["semantic"]
    assert sem["identical_pairs"] == 3
    assert sem["identical_labelled_same"] == 2
    assert "identical_pairs" not in result.to_json()["kernels"]["exact"]
