"""Any set of shards (a corpus path's prefix) scores exactly as an index built on it alone."""

from __future__ import annotations

import random
from pathlib import Path

import bm25s
import numpy as np
import pytest

from snapaudit.errors import ConfigError
from snapaudit.testbed.corpus.build import DocStore
from snapaudit.testbed.paths import path_orders
from snapaudit.testbed.retrieval.bm25 import Bm25Retriever
from snapaudit.testbed.retrieval.tokenize import tokenize
from tests.testbed.conftest import generated_docs

QUERIES = ["alpha river", "omega omega stone", "lantern", "pi rho sigma tau", "nothing"]


def _subset_docs(corpus: Path, shards: list[int]) -> list[tuple[str, list[str]]]:
    store = DocStore(corpus)
    return [(d.doc_id, tokenize(d.text)) for j in sorted(shards) for d in store.iter_shard(j)]


def _random_subsets(n_shards: int, seed: int) -> list[list[int]]:
    rng = random.Random(seed)
    subsets = [rng.sample(range(n_shards), rng.randint(1, n_shards)) for _ in range(6)]
    # the prefixes of two seeded corpus paths, as a 3-path audit searches them
    for order in path_orders(n_shards, 3, seed)[1:]:
        subsets += [list(order[:p]) for p in (1, 3)]
    return subsets


@pytest.mark.parametrize("k1,b", [(0.9, 0.4), (1.2, 0.75)])
def test_subset_scores_equal_bm25s_on_that_subset_alone(make_corpus, k1: float, b: float) -> None:  # type: ignore[no-untyped-def]
    corpus = make_corpus(generated_docs(400), shards=7, seed=5)
    ret = Bm25Retriever(corpus, k1=k1, b=b)
    subsets = _random_subsets(7, seed=3)
    assert any(s != list(range(len(s))) for s in subsets)  # not only prefixes
    for shards in subsets:
        docs = _subset_docs(corpus, shards)
        ref = bm25s.BM25(method="lucene", k1=k1, b=b, dtype="float64")
        ref.index([toks for _, toks in docs], show_progress=False)
        vocab = set(ref.vocab_dict)
        for q in QUERIES:
            toks = tokenize(q)
            ours = np.concatenate(ret.shard_scores(toks, shards))
            known = [t for t in toks if t in vocab]
            theirs = ref.get_scores(known) if known else np.zeros(len(docs))
            assert ours.shape == theirs.shape
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)
            order = sorted(range(len(docs)), key=lambda i: (-theirs[i], docs[i][0]))
            want = [docs[i][0] for i in order if theirs[i] > 1e-9][:8]
            assert [h.doc_id for h in ret.search_shards(q, shards, 8)] == want


def test_subset_equals_a_corpus_built_on_those_documents_alone(make_corpus, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The per-subset build: the subset's documents as a corpus of their own (one shard);
    the same ranking and the same float64 scores."""
    docs = generated_docs(300, seed=11)
    corpus = make_corpus(docs, shards=5, seed=1)
    ret = Bm25Retriever(corpus)
    store = DocStore(corpus)
    for shards in ([3, 1], [4], [0, 2, 4], [4, 3, 2, 1, 0]):
        ids = {d.doc_id for j in shards for d in store.iter_shard(j)}
        alone = Bm25Retriever(make_corpus([d for d in docs if d["id"] in ids], shards=1))
        for q in QUERIES:
            got = [(h.doc_id, h.score) for h in ret.search_shards(q, shards, 10)]
            assert got == [(h.doc_id, h.score) for h in alone.search(q, 1, 10)]


def test_subset_order_and_repeats_do_not_matter_and_prefixes_are_unchanged(make_corpus) -> None:  # type: ignore[no-untyped-def]
    ret = Bm25Retriever(make_corpus(generated_docs(200), shards=4, seed=2))
    assert ret.search_shards("alpha", [2, 0, 2], 5) == ret.search_shards("alpha", [0, 2], 5)
    assert ret.search_shards("alpha", range(3), 5) == ret.search("alpha", 3, 5)
    assert ret.search_shards("alpha", [], 5) == []
    with pytest.raises(ConfigError, match="outside"):
        ret.search_shards("alpha", [4], 5)
