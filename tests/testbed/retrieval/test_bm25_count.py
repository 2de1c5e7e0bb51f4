"""The vectorized counter equals Counter(tokenize(text)) per document, on every path."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from snapaudit.testbed.corpus.build import CorpusInput, build_corpus
from snapaudit.testbed.retrieval.bm25_count import TermTable, _Collision, count_batch
from snapaudit.testbed.retrieval.bm25_keys import PACK_CHARS, token_keys
from snapaudit.testbed.retrieval.tokenize import tokenize
from tests.testbed.conftest import generated_docs, write_jsonl

TEXTS = [
    "The Nobel-Prize_winner, RÖNTGEN (1901) ﬁ", "x" * 64 + " " + "y" * 65, "", "the of and",
    "a b a b B", "Ünïcode ＡＢＣ ΣΑΣ straße İstanbul 12³ don’t", "lone \ud800 surrogate",
    "数学 and ١٢٣ digits", "same same same", "naïve naïve NAÏVE",
    "abcdefgh abcdefghi abcdefghijklmno abcdefghijklmnop abcdefghijklmnop abcdefgh",
    "ÿÿÿÿÿÿÿÿ ÿÿÿÿÿÿÿÿÿ éééééééééééééé€ x1 1x 00000000 000000000",
]


def _counted(texts: list[str], batch: int, table: TermTable) -> tuple[list[tuple[str, int, int]],
                                                                      list[int]]:
    out, lens = [], []
    for lo in range(0, len(texts), batch):
        c = count_batch(texts[lo: lo + batch], table)
        out += [(table.words[g], d + lo, f) for g, d, f in
                zip(c.gids.tolist(), c.docs.tolist(), c.tfs.tolist(), strict=True)]
        lens += c.doc_lens.tolist()
    return sorted(out), lens


def _expected(texts: list[str]) -> tuple[list[tuple[str, int, int]], list[int]]:
    per_doc = [Counter(tokenize(t)) for t in texts]
    return (sorted((w, d, f) for d, c in enumerate(per_doc) for w, f in c.items()),
            [sum(c.values()) for c in per_doc])


@pytest.mark.parametrize("batch", [1, 3, 100])
def test_counts_equal_the_tokenizer(batch: int) -> None:
    texts = TEXTS + [str(d["text"]) for d in generated_docs(60)]
    table = TermTable()
    assert _counted(texts, batch, table) == _expected(texts)
    assert len(set(table.words)) == len(table.words)  # one id per term across batches
    assert ("fi", 0, 1) in _counted(TEXTS[:1], 1, TermTable())[0]


def test_per_token_path_gives_the_same_counts() -> None:
    table = TermTable()
    table.index = {}  # the path a hash collision switches a table to
    assert _counted(TEXTS, 4, table) == _expected(TEXTS)


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_build_is_byte_identical_for_any_worker_count_batch_and_segment_order(
        tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "in.jsonl", generated_docs(300))
    one = tmp_path / "one"
    build_corpus([CorpusInput(src)], one, shards=3, segment_docs=40, batch_docs=7)
    pool = tmp_path / "pool"
    build_corpus([CorpusInput(src)], pool, shards=3, segment_docs=40, batch_docs=64,
                 workers=2)
    assert _tree(one) == _tree(pool)
    segs = sorted(p.name for p in (one / "bm25" / "shard-00").iterdir())
    rows = json.loads((one / "bm25" / "meta.json").read_text())["shards"][0]["docs"]
    assert 77 < rows <= 117  # segments of 2, 5, 10, 20, 40, 40 rows (the last one shorter)
    assert segs[-1] == "seg-005" and "doclen.npy" in segs


def _keys_of(words: list[str]) -> list[tuple[int, int]]:
    joined = "\n".join(words) + "\n"
    cp = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    ends = np.cumsum([len(w) + 1 for w in words]) - 1
    h1, h2 = token_keys(cp, ends - np.array([len(w) for w in words]), ends)
    return list(zip(h1.tolist(), h2.tolist(), strict=True))


def test_token_keys_are_exact_for_short_tokens_and_independent_of_position() -> None:
    words = ["a", "b", "ab", "ba", "aaaaaaaa", "aaaaaaaab", "aaaaaaaaa", "ÿ" * 15, "ÿ" * 16,
             "x" * PACK_CHARS, "x" * (PACK_CHARS + 1), "€", "€uro", "é", "e", "0", "00"]
    keys = _keys_of(words)
    assert len(set(keys)) == len(words)  # distinct tokens, distinct keys
    assert len({h1 for h1, _ in keys}) == len(words)
    assert _keys_of(["zz", *words[::-1]])[1:] == keys[::-1]  # same token, same key anywhere
    packed = [h2 >> 63 for _, h2 in keys]  # the top bit of h2 tells the two kinds apart
    assert packed == [1] * 8 + [0, 1, 0, 0, 0] + [1] * 4


def test_a_first_key_shared_by_two_terms_is_refused() -> None:
    table = TermTable()
    cut = lambda at: np.array([ord("q"), 10] * len(at), dtype=np.uint32)  # noqa: E731
    u = np.array([7], dtype=np.uint64)
    assert table.lookup(u, np.array([1], dtype=np.uint64), cut).tolist() == [0]
    assert table.lookup(u, np.array([1], dtype=np.uint64), cut).tolist() == [0]
    with pytest.raises(_Collision):
        table.lookup(u, np.array([2], dtype=np.uint64), cut)
