"""Cluster bootstrap, the cluster field of the tables and cohort, and overlap in documents."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from snapaudit.errors import InputError
from snapaudit.run.record.cohort import read_manifest, select, write_manifest
from snapaudit.run.record.protocol import CohortConfig
from snapaudit.stats.analysis import AnalysisConfig, analyze
from snapaudit.stats.bootstrap import whole_question_bootstrap
from snapaudit.stats.cluster import (
    cluster_bootstrap,
    design_effect,
    icc_anova,
    resampling,
)
from snapaudit.tables import AnswerRow, read_answers, write_answers
from tests.stats._analysis_helpers import rows


def test_cluster_bootstrap_exact_distribution() -> None:
    # clusters A = {1, 1} (size 2) and B = {0} (size 1); two clusters per draw:
    # AA -> 1 (1/4), AB or BA -> 2/3 (1/2), BB -> 0 (1/4)
    boot = cluster_bootstrap(np.array([1.0, 1.0, 0.0]), np.array([0, 0, 1]), 40_000, 3)
    assert boot.point[0] == pytest.approx(2 / 3)
    values, counts = np.unique(np.round(boot.draws[:, 0], 12), return_counts=True)
    assert values.tolist() == pytest.approx([0.0, 2 / 3, 1.0])
    assert (counts / counts.sum()).tolist() == pytest.approx([0.25, 0.5, 0.25], abs=0.01)
    assert boot.summary(0).p_nonpositive == pytest.approx(0.25, abs=0.01)


def test_cluster_bootstrap_differential_against_naive_cluster_resampling() -> None:
    rng = np.random.default_rng(0)
    sizes = rng.integers(2, 9, 40)
    groups = np.repeat(np.arange(40), sizes)
    values = rng.normal(size=40)[groups] + rng.normal(size=groups.size)
    fast = cluster_bootstrap(values, groups, 20_000, 1).draws[:, 0]
    members = [values[groups == g] for g in range(40)]
    naive = []
    for _ in range(5000):
        pick = rng.integers(0, 40, 40)
        naive.append(np.concatenate([members[g] for g in pick]).mean())
    for q in (2.5, 50, 97.5):
        assert np.percentile(fast, q) == pytest.approx(np.percentile(naive, q), abs=0.04)
    # one question per cluster: the size column is constant, so the draws are the question
    # bootstrap's (up to the float summation order of the matrix product)
    single = cluster_bootstrap(values, np.arange(values.size), 500, 9).draws
    plain = whole_question_bootstrap(values, 500, 9).draws
    assert np.allclose(single, plain, rtol=0, atol=1e-12)


def test_resampling_from_rows_and_errors() -> None:
    base = rows({"q1": {"A": ["x", "x"], "B": ["x", "y"]},
                 "q2": {"A": ["x", "x"], "B": ["x", "x"]},
                 "q3": {"A": ["p", "p"], "B": ["q", "q"]}})
    assert resampling(base, ["q1", "q2", "q3"]).unit == "question"
    label = {"q1": "doc-b", "q2": "doc-a", "q3": "doc-b"}
    clustered = [AnswerRow(r.question_id, r.state, r.repeat, r.answer,
                           cluster=label[r.question_id]) for r in base]
    res = resampling(clustered, ["q1", "q2", "q3"])
    assert res.unit == "cluster" and res.clusters == 2
    assert res.groups is not None and res.groups.tolist() == [1, 0, 1]
    with pytest.raises(InputError, match="no cluster"):
        resampling([*clustered[:-1], base[-1]], ["q1", "q2", "q3"])
    bad = [*clustered[:-1], AnswerRow("q3", "B", 2, "q", cluster="doc-c")]
    with pytest.raises(InputError, match="two clusters"):
        resampling(bad, ["q1", "q2", "q3"])
    doc = analyze(clustered, config=AnalysisConfig(old="A", new="B", draws=500)).to_json()
    assert doc["comparison"]["resampled"] == {"unit": "cluster", "clusters": 2}  # type: ignore[index]


def test_icc_and_design_effect_hand_values() -> None:
    # two clusters of two: means 0 and 1, no within variation -> ICC 1
    assert icc_anova(np.array([0.0, 0.0, 1.0, 1.0]), np.array([0, 0, 1, 1])) == 1.0
    # within-only variation -> ICC 0 (truncated)
    assert icc_anova(np.array([0.0, 1.0, 0.0, 1.0]), np.array([0, 0, 1, 1])) == 0.0
    # sizes 2 and 4: m_bar = (4 + 16) / 6 = 10/3; deff = 1 + (7/3) * 0.3 = 1.7
    assert design_effect(np.array([2, 4]), 0.3) == pytest.approx(1.7)


def test_cluster_field_roundtrip(tmp_path: Path) -> None:
    path = tmp_path / "a.jsonl"
    write_answers(path, [AnswerRow("q1", "A", 1, "x", cluster="c1"), AnswerRow("q1", "A", 2, "x",
                                                                            cluster="c1")])
    assert json.loads(path.read_text().splitlines()[0])["cluster"] == "c1"
    assert [r.cluster for r in read_answers(path)] == ["c1", "c1"]
    path.write_text('{"question_id": "q", "state": "A", "repeat": 1, "answer": "x", '
                    '"cluster": 3}\n')
    with pytest.raises(InputError, match="cluster"):
        read_answers(path)


def test_cohort_cluster_field(tmp_path: Path) -> None:
    src = tmp_path / "q.jsonl"
    src.write_text("".join(json.dumps({"id": f"q{i}", "question": f"Q{i}?", "doc": i // 2})
                           + "\n" for i in range(4)))
    cfg = CohortConfig(source="jsonl", path="q.jsonl", size=4, cluster_field="doc")
    manifest = select(cfg, tmp_path)
    assert sorted((q["question_id"], q["cluster"]) for q in manifest["questions"]) == [
        ("q0", "0"), ("q1", "0"), ("q2", "1"), ("q3", "1")]
    write_manifest(tmp_path / "cohort.json", manifest)
    assert {q.question_id: q.cluster for q in read_manifest(tmp_path / "cohort.json")} == {
        "q0": "0", "q1": "0", "q2": "1", "q3": "1"}
    plain = select(CohortConfig(source="jsonl", path="q.jsonl", size=4), tmp_path)
    assert all("cluster" not in q for q in plain["questions"])
    with pytest.raises(InputError, match="cluster field 'topic'"):
        select(CohortConfig(source="jsonl", path="q.jsonl", size=4, cluster_field="topic"),
               tmp_path)


def test_overlap_mean_docs_hand_value() -> None:
    table = [AnswerRow(q, s, j, "x", doc_ids=ids)
             for q, per in {"q1": {"A": ("d1", "d2", "d3"), "B": ("d2", "d3", "d4")},
                            "q2": {"A": ("e1", "e2", "e3"), "B": ("f1", "f2", "e1")}}.items()
             for s, ids in per.items() for j in (1, 2)]
    doc = analyze(table, config=AnalysisConfig(old="A", new="B", draws=200,
                                               permutations=0)).to_json()
    ov = doc["overlap"]
    assert isinstance(ov, dict)
    # shared 2 and 1 of k = 3: 1.5 documents, fraction 0.5
    assert ov["mean_docs"] == 1.5 and ov["mean"] == pytest.approx(0.5) and ov["k"] == 3
