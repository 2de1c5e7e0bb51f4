from __future__ import annotations

import json
from pathlib import Path

import pytest

from snapaudit.errors import ConfigError, InputError, IntegrityError
from snapaudit.hashing import sha256_file
from snapaudit.testbed.corpus.build import (
    MANIFEST,
    CorpusInput,
    DocStore,
    build_corpus,
    load_manifest,
    shard_of,
    shard_path,
    verify_corpus,
)
from snapaudit.testbed.retrieval.bm25 import Bm25Retriever
from tests.testbed.conftest import generated_docs, write_jsonl


def _shard_ids(corpus: Path) -> list[list[str]]:
    store = DocStore(corpus)
    return [store.ids(j) for j in range(store.n_shards)]


def test_shard_of_is_a_fixed_seeded_hash() -> None:
    import hashlib

    digest = hashlib.sha256(b"3\x00doc-1").digest()
    assert shard_of("doc-1", 3, 7) == int.from_bytes(digest[:8], "big") % 7
    assert {shard_of(f"d{i}", 0, 7) for i in range(200)} == set(range(7))


def test_manifest_and_shards(make_corpus) -> None:  # type: ignore[no-untyped-def]
    rows = generated_docs(120)
    corpus = make_corpus(rows, shards=5, seed=11)
    manifest = load_manifest(corpus)
    raw = json.loads((corpus / MANIFEST).read_text())
    assert raw["schema_version"] == 1 and raw["seed"] == 11 and raw["total"] == 120
    assert set(raw["shards"][0]) == {"count", "bytes", "sha256"}
    ids = _shard_ids(corpus)
    assert sorted(i for s in ids for i in s) == sorted(str(r["id"]) for r in rows)
    for j, shard in enumerate(ids):
        assert all(shard_of(i, 11, 5) == j for i in shard)
        assert manifest.shards[j].count == len(shard)
        assert manifest.shards[j].sha256 == sha256_file(shard_path(corpus, j))
    # input order is kept within a shard
    assert all(s == sorted(s) for s in ids)


def test_prefixes_are_nested_and_rebuilds_are_byte_identical(make_corpus) -> None:  # type: ignore[no-untyped-def]
    rows = generated_docs(150)
    a, b = make_corpus(rows, shards=7, seed=3), make_corpus(rows, shards=7, seed=3)
    assert load_manifest(a).hash() == load_manifest(b).hash()
    ids = _shard_ids(a)
    prefixes = [set().union(*ids[:k]) if k else set() for k in range(8)]
    for k in range(7):
        assert prefixes[k] < prefixes[k + 1]
        assert prefixes[k + 1] - prefixes[k] == set(ids[k])
    # more documents later: every shard only grows by the new ids, old rows unchanged
    more = make_corpus(rows + generated_docs(300, seed=9)[150:], shards=7, seed=3)
    for old, new in zip(ids, _shard_ids(more), strict=True):
        assert new[: len(old)] == old
    # another seed gives another partition
    assert _shard_ids(make_corpus(rows, shards=7, seed=4)) != ids


def test_duplicates_are_skipped_and_conflicts_refused(tmp_path: Path) -> None:
    src = write_jsonl(tmp_path / "a.jsonl", [{"id": "x", "text": "t"}, {"id": "x", "text": "t"}])
    manifest = build_corpus([CorpusInput(src)], tmp_path / "c1", shards=2)
    assert (manifest.total, manifest.duplicates) == (1, 1)
    bad = write_jsonl(tmp_path / "b.jsonl", [{"id": "x", "text": "t"}, {"id": "x", "text": "u"}])
    with pytest.raises(InputError, match="twice with different content"):
        build_corpus([CorpusInput(bad)], tmp_path / "c2", shards=2)
    other = write_jsonl(tmp_path / "c.jsonl", [{"id": "x", "text": "u"}])
    fixed = build_corpus([CorpusInput(src), CorpusInput(other, id_prefix="b:")],
                         tmp_path / "c3", shards=2)
    assert fixed.total == 2


def test_output_must_be_empty_and_verify_detects_changes(make_corpus) -> None:  # type: ignore[no-untyped-def]
    corpus = make_corpus(generated_docs(20), shards=2)
    with pytest.raises(ConfigError, match="not empty"):
        build_corpus([], corpus)
    verify_corpus(corpus)
    with open(shard_path(corpus, 1), "ab") as f:
        f.write(b"\n")
    with pytest.raises(IntegrityError, match="shard 1"):
        verify_corpus(corpus)


def test_docstore_lookup(make_corpus) -> None:  # type: ignore[no-untyped-def]
    rows = generated_docs(40)
    store = DocStore(make_corpus(rows, shards=3))
    doc = store.document("d0017")
    assert (doc.url, doc.text) == (rows[17]["url"], rows[17]["text"])
    with pytest.raises(KeyError):
        store.document("nope")


def test_shard_lines_are_canonical_json_for_any_text(tmp_path: Path) -> None:
    texts = ['plain words', 'a "quoted" word', "back\\slash", "line\nbreak\ttab\x00nul\x1f",
             "naïve Ünïcode ＡＢＣ", "\u2028 and \u2029 and \x7f", "emoji 😀 数学", "",
             'mix é "ü" \n']
    rows = [{"id": f"t{i}\u00e9\"\\", "url": f"https://e/{i}?q=\"x\"", "text": t}
            for i, t in enumerate(texts)]
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    build_corpus([CorpusInput(src)], tmp_path / "c", shards=1, batch_docs=4)
    got = (tmp_path / "c" / "shards" / "shard-00.jsonl").read_bytes().splitlines()
    want = [json.dumps({"id": r["id"], "text": r["text"], "url": r["url"]}, ensure_ascii=False,
                       separators=(",", ":")).encode() for r in rows]
    assert got == want
    assert DocStore(tmp_path / "c").document("t1é\"\\").text == 'a "quoted" word'
    ret = Bm25Retriever(tmp_path / "c")  # the index saw the decoded texts ("\\n" is a break)
    assert [h.doc_id for h in ret.search("break slash", 1, 5)] == ["t2é\"\\", "t3é\"\\"]
