"""BM25: hand-computed scores, prefix exactness against bm25s built on the prefix alone."""

from __future__ import annotations

import math
from pathlib import Path

import bm25s
import numpy as np
import pytest

from snapaudit.errors import ConfigError
from snapaudit.testbed.corpus.build import DocStore
from snapaudit.testbed.retrieval.bm25 import Bm25Retriever, merge_top, query_terms
from snapaudit.testbed.retrieval.tokenize import tokenize
from tests.testbed.conftest import WORDS, generated_docs


def test_tokenizer_is_documented_behaviour() -> None:
    assert tokenize("The Nobel-Prize_winner, RÖNTGEN (1901) ﬁ") == [
        "nobel", "prize", "winner", "röntgen", "1901", "fi"]
    assert tokenize("x" * 64 + " " + "y" * 65) == ["x" * 64]


def test_hand_computed_score(make_corpus) -> None:  # type: ignore[no-untyped-def]
    rows = [{"id": "d1", "text": "apple banana"}, {"id": "d2", "text": "apple"},
            {"id": "d3", "text": "cherry"}]
    ret = Bm25Retriever(make_corpus(rows, shards=1), k1=0.9, b=0.4)
    hits = ret.search("banana", 1, 8)
    # N=3, df=1, avgdl=4/3, dl=2: idf=ln(1+2.5/1.5); tf part 1/(1+0.9*(0.6+0.4*1.5))
    expected = math.log(8 / 3) / (1 + 0.9 * 1.2)
    assert [h.doc_id for h in hits] == ["d1"]
    assert hits[0].score == pytest.approx(expected, rel=1e-12)
    assert ret.search("durian", 1, 8) == []


def test_ties_break_by_doc_id(make_corpus) -> None:  # type: ignore[no-untyped-def]
    rows = [{"id": i, "text": "same words here"} for i in ("z9", "a1", "m5", "b2")]
    rows.append({"id": "q", "text": "other"})
    ret = Bm25Retriever(make_corpus(rows, shards=3))
    assert [h.doc_id for h in ret.search("words", 3, 3)] == ["a1", "b2", "m5"]
    assert [h.doc_id for h in ret.search("words", 3, 8)] == ["a1", "b2", "m5", "z9"]


def _prefix_docs(corpus: Path, prefix: int) -> list[tuple[str, list[str]]]:
    store = DocStore(corpus)
    return [(d.doc_id, tokenize(d.text)) for j in range(prefix) for d in store.iter_shard(j)]


@pytest.mark.parametrize("k1,b", [(0.9, 0.4), (1.2, 0.75)])
def test_prefix_scores_equal_bm25s_on_that_prefix_alone(make_corpus, k1: float, b: float) -> None:  # type: ignore[no-untyped-def]
    corpus = make_corpus(generated_docs(400), shards=7, seed=5)
    ret = Bm25Retriever(corpus, k1=k1, b=b)
    queries = ["alpha river", "omega omega stone", "lantern", "pi rho sigma tau", "nothing"]
    for prefix in range(1, 8):
        docs = _prefix_docs(corpus, prefix)
        ref = bm25s.BM25(method="lucene", k1=k1, b=b, dtype="float64")
        ref.index([toks for _, toks in docs], show_progress=False)
        vocab = set(ref.vocab_dict)
        for q in queries:
            toks = tokenize(q)
            ours = np.concatenate(ret.shard_scores(toks, prefix))
            known = [t for t in toks if t in vocab]
            theirs = ref.get_scores(known) if known else np.zeros(len(docs))
            assert ours.shape == theirs.shape
            np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-6)
            if known:
                assert ours.max() > 0
            # the ranking is the prefix's own ranking with id tie-breaks
            order = sorted(range(len(docs)), key=lambda i: (-theirs[i], docs[i][0]))
            want = [docs[i][0] for i in order if theirs[i] > 1e-9][:8]
            assert [h.doc_id for h in ret.search(q, prefix, 8)] == want


def test_prefix_scores_differ_from_whole_corpus_statistics(make_corpus) -> None:  # type: ignore[no-untyped-def]
    corpus = make_corpus(generated_docs(200), shards=4, seed=1)
    ret = Bm25Retriever(corpus)
    n1 = ret.shard_scores(["alpha"], 1)[0]
    n4_first_shard = ret.shard_scores(["alpha"], 4)[0]
    assert n1.shape == n4_first_shard.shape
    assert not np.allclose(n1, n4_first_shard)  # df/N/avgdl of the prefix, not the corpus


def test_prefix_out_of_range(make_corpus) -> None:  # type: ignore[no-untyped-def]
    ret = Bm25Retriever(make_corpus(generated_docs(10), shards=2))
    assert ret.search(WORDS[0], 0, 8) == []
    with pytest.raises(ConfigError, match=r"outside 0\.\.2"):
        ret.search("alpha", 3, 8)
    assert ret.spec()["corpus"] == ret.store.manifest.hash()


def test_top_k_equals_brute_force_when_rows_repeat_across_terms(make_corpus) -> None:  # type: ignore[no-untyped-def]
    corpus = make_corpus(generated_docs(400), shards=7, seed=5)  # 16-row segments
    ret = Bm25Retriever(corpus)
    store = DocStore(corpus)
    ids = [[d.doc_id for d in store.iter_shard(j)] for j in range(7)]
    for n, query in enumerate(["alpha beta gamma delta epsilon zeta", "river river stone maple",
                               " ".join(WORDS), "pi rho sigma tau upsilon phi chi psi"]):
        prefix = 3 + n
        scores = ret.shard_scores(tokenize(query), prefix)
        every = sorted((-float(s), ids[j][r]) for j in range(prefix)
                       for r, s in enumerate(scores[j].tolist()) if s > 0)
        for k in (1, 2, 3, 8):
            got = [(h.doc_id, h.score) for h in ret.search(query, prefix, k)]
            assert got == [(i, -s) for s, i in every[:k]]


def test_one_pass_over_the_prefix_equals_merging_the_shards_top_lists(make_corpus) -> None:  # type: ignore[no-untyped-def]
    corpus = make_corpus(generated_docs(300), shards=5, seed=2)  # several segments per shard
    ret = Bm25Retriever(corpus)
    assert max(len(s.segments) for s in ret.shards(5)) > 1
    full = 0
    for query in ["alpha beta gamma", "river river stone", " ".join(WORDS[:9]), "zzz alpha"]:
        for prefix in (1, 2, 5):
            shards = ret.shards(prefix)
            st = ret._stats(query_terms(query), shards)
            for k in (1, 3, 8):
                merged = merge_top([s.top(st.terms, st.idfs, st.avgdl, ret.k1, ret.b, k)
                                    for s in shards], k)
                got = ret.search(query, prefix, k)
                assert got == merged and len(got) <= k
                full += len(got) == k
    assert full >= 20  # most cases fill their k
