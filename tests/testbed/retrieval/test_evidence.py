from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from snapaudit.errors import ConfigError, IntegrityError
from snapaudit.systems.base import Evidence
from snapaudit.testbed.retrieval.config import RenderConfig, TestbedConfig
from snapaudit.testbed.retrieval.evidence import EvidenceBuilder
from tests.testbed.conftest import generated_docs

STATES = {"n0": 0, "n1": 1, "n3": 3, "n7": 7}
QUESTIONS = [("q1", "alpha river stone"), ("q2", "omega lantern"), ("q3", "pi pi harbor")]


def _ev(builder: EvidenceBuilder, qid: str, question: str, state: str) -> Evidence | None:
    """One (awaited) retrieval of ``builder``."""
    return asyncio.run(builder.evidence(qid, question, state))


def _testbed(corpus: Path, **kw: object) -> TestbedConfig:
    return TestbedConfig(corpus=str(corpus), states=STATES, **kw)  # type: ignore[arg-type]


def test_two_builders_on_empty_caches_are_byte_identical(make_corpus, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    corpus = make_corpus(generated_docs(300), shards=7)
    one = EvidenceBuilder(_testbed(corpus), tmp_path / "pass1")
    two = EvidenceBuilder(_testbed(corpus), tmp_path / "pass2")
    for qid, q in QUESTIONS:
        assert _ev(one, qid, q, "n0") is None
        for state in ("n1", "n3", "n7"):
            a, b = _ev(one, qid, q, state), _ev(two, qid, q, state)
            assert a is not None and b is not None
            assert a.doc_ids == b.doc_ids and len(a.doc_ids) == 8
            assert a.rendered.encode() == b.rendered.encode()
    assert one.spec() == two.spec()
    files = sorted(p.relative_to(tmp_path / "pass1") for p in (tmp_path / "pass1").rglob("*.json"))
    assert len(files) == 9 and {f.parts[0] for f in files} == {"n1", "n3", "n7"}


def test_cache_is_reused_and_checked(make_corpus, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    corpus = make_corpus(generated_docs(100), shards=7)
    builder = EvidenceBuilder(_testbed(corpus), tmp_path / "cache")
    first = _ev(builder, "q1", "alpha", "n3")
    [entry] = (tmp_path / "cache" / "n3").glob("*.json")
    record = json.loads(entry.read_text())
    assert record["doc_ids"] == list(first.doc_ids) and len(record["scores"]) == 8  # type: ignore[union-attr]
    record["rendered"] = "tampered"
    entry.write_text(json.dumps(record))
    assert _ev(builder, "q1", "alpha", "n3").rendered == "tampered"  # type: ignore[union-attr]
    record["key"]["state"] = "n7"
    entry.write_text(json.dumps(record))
    with pytest.raises(IntegrityError, match="does not match its key"):
        _ev(builder, "q1", "alpha", "n3")


def test_render_limits_and_top_k_shape_evidence(make_corpus) -> None:  # type: ignore[no-untyped-def]
    corpus = make_corpus(generated_docs(100), shards=7)
    tb = _testbed(corpus, top_k=2, render=RenderConfig(max_chars=5, include_url=False))
    ev = _ev(EvidenceBuilder(tb, None), "q", "alpha", "n7")
    assert ev is not None and len(ev.doc_ids) == 2
    blocks = ev.rendered.split("\n\n")
    assert [b.split("\n")[0] for b in blocks] == [f"[1] id: {ev.doc_ids[0]}",
                                                  f"[2] id: {ev.doc_ids[1]}"]
    assert all(len(b.split("\n")[1]) <= 5 for b in blocks)
    spec = EvidenceBuilder(tb, None).spec()
    assert spec["top_k"] == 2 and spec["render"]["max_chars"] == 5
    assert spec["retriever"]["kind"] == "bm25" and len(spec["retriever"]["corpus"]) == 64


def test_unknown_state_and_missing_corpus(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="unknown testbed state 'n9'"):
        _ev(EvidenceBuilder(TestbedConfig(states=STATES), None), "q", "x", "n9")
    with pytest.raises(ConfigError, match=r"testbed\.corpus"):
        _ev(EvidenceBuilder(TestbedConfig(states=STATES), None), "q", "x", "n1")
    with pytest.raises(ConfigError, match=r"no corpus_manifest\.json"):
        _ev(EvidenceBuilder(_testbed(tmp_path), None), "q", "x", "n1")
