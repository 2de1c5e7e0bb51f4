"""The vectorized counter equals Counter(tokenize(text)) per document, on every path."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import pytest

from snapaudit.testbed.corpus.build import CorpusInput, build_corpus
from snapaudit.testbed.retrieval.bm25_count import TermTable, count_batch
from snapaudit.testbed.retrieval.tokenize import tokenize

from .conftest import generated_docs, write_jsonl

TEXTS = [
    "The Nobel-Prize_winner, RÖNTGEN (1901) ﬁ", "x" * 64 + " " + "y" * 65, "", "the of and",
    "a b a b B", "Ünïcode ＡＢＣ ΣΑΣ straße İstanbul 12³ don’t", "lone \ud800 surrogate",
    "数学 and ١٢٣ digits", "same same same", "naïve naïve NAÏVE",
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
    assert segs[-1] == "seg-002" and "doclen.npy" in segs  # 100-ish rows: 3 segments of 40
