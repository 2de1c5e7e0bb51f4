"""Evidence of corpus-path states: path 0 is the one-path evidence, cache files included;
path j's state searches the first shards of path j's order."""

from __future__ import annotations

import asyncio
from pathlib import Path

from snapaudit.systems.base import Evidence
from snapaudit.testbed.paths import expand_states, path_orders
from snapaudit.testbed.retrieval.bm25 import Bm25Retriever
from snapaudit.testbed.retrieval.config import PathsConfig, TestbedConfig
from snapaudit.testbed.retrieval.evidence import EvidenceBuilder
from tests.testbed.conftest import generated_docs

BASE = {"n0": 0, "n1": 1, "n3": 3, "n7": 7}
QUESTIONS = [("q1", "alpha river stone"), ("q2", "omega lantern"), ("q3", "pi pi harbor")]


def _ev(builder: EvidenceBuilder, qid: str, question: str, state: str) -> Evidence | None:
    return asyncio.run(builder.evidence(qid, question, state))


def test_path_states_search_their_orders_prefixes(make_corpus, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    corpus = make_corpus(generated_docs(300), shards=7)
    _, states = expand_states(list(BASE), BASE, 3)
    paths = EvidenceBuilder(TestbedConfig(corpus=str(corpus), states=states,
                                          paths=PathsConfig(count=3, seed=2)), tmp_path / "k3")
    one = EvidenceBuilder(TestbedConfig(corpus=str(corpus), states=BASE), tmp_path / "k1")
    ret = Bm25Retriever(corpus)
    orders = path_orders(7, 3, 2)
    for qid, q in QUESTIONS:
        assert _ev(paths, qid, q, "n0") is None
        for state in ("n1", "n3", "n7"):  # path 0: the one-path evidence
            a, b = _ev(paths, qid, q, state), _ev(one, qid, q, state)
            assert a is not None and b is not None and a.rendered == b.rendered
        for j in (1, 2):
            for p in (1, 3, 7):
                ev = _ev(paths, qid, q, f"p{j}.n{p}")
                assert ev is not None
                want = ret.search_shards(q, orders[j][:p], 8)
                assert list(ev.doc_ids) == [h.doc_id for h in want]
    # the cache of path 0's states is byte for byte the one-path cache
    for state in ("n1", "n3", "n7"):
        k3 = {f.name: f.read_bytes() for f in (tmp_path / "k3" / state).glob("*.json")}
        k1 = {f.name: f.read_bytes() for f in (tmp_path / "k1" / state).glob("*.json")}
        assert k3 == k1 and len(k1) == 3
    spec = paths.spec()
    assert spec["paths"] == {"count": 3, "seed": 2, "orders": [list(o) for o in orders]}
    assert "paths" not in one.spec()
