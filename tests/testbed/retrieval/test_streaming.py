"""Streaming ingest: batches bounded by batch_docs, Parquet read in row batches, fsspec URLs."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from snapaudit.testbed.corpus.build import CorpusInput, build_corpus
from snapaudit.testbed.retrieval.bm25 import Bm25Retriever
from tests.testbed.conftest import generated_docs, write_jsonl


class _Recorder:
    """A Progress that records the size of every ingest step."""

    def __init__(self) -> None:
        self.stage_name = ""
        self.ingest_steps: list[int] = []

    def stage(self, name: str, total: int | None = None) -> None:
        self.stage_name = name

    def advance(self, n: int = 1) -> None:
        if self.stage_name == "ingest documents":
            self.ingest_steps.append(n)

    def info(self, message: str) -> None:
        return None

    def close(self) -> None:
        return None


def test_parquet_20x_the_batch_streams_in_bounded_batches(tmp_path: Path) -> None:
    rows = generated_docs(400, seed=9)
    table = pa.table({"id": [r["id"] for r in rows], "text": [r["text"] for r in rows],
                      "url": [r["url"] for r in rows], "dump": ["CC-MAIN"] * len(rows)})
    src = tmp_path / "fineweb-000.parquet"
    pq.write_table(table, src, row_group_size=20)
    rec = _Recorder()
    manifest = build_corpus([CorpusInput(src, "fineweb")], tmp_path / "c", shards=3,
                            batch_docs=20, progress=rec)
    assert manifest.total == 400
    assert rec.ingest_steps == [20] * 20  # 20 batches, none above the batch size
    assert manifest.inputs[0].records == 400 and manifest.inputs[0].size == src.stat().st_size
    jsonl = write_jsonl(tmp_path / "same.jsonl", rows)
    ref = build_corpus([CorpusInput(jsonl)], tmp_path / "ref", shards=3, batch_docs=1000)
    assert [s.sha256 for s in ref.shards] == [s.sha256 for s in manifest.shards]
    assert Bm25Retriever(tmp_path / "c").search("alpha river", 3, 5) == \
        Bm25Retriever(tmp_path / "ref").search("alpha river", 3, 5)


def test_fsspec_url_input_builds_the_same_corpus(tmp_path: Path) -> None:
    fsspec = pytest.importorskip("fsspec", reason="URL inputs need the fsspec package")
    rows = generated_docs(50, seed=2)
    local = write_jsonl(tmp_path / "web.jsonl", rows)
    with fsspec.open("memory://snapaudit-test/web.jsonl", "wb") as f:
        f.write(local.read_bytes())
    try:
        by_url = build_corpus([CorpusInput("memory://snapaudit-test/web.jsonl")],
                              tmp_path / "u", shards=2, batch_docs=8)
    finally:
        fsspec.filesystem("memory").rm("snapaudit-test", recursive=True)
    by_path = build_corpus([CorpusInput(local)], tmp_path / "p", shards=2)
    assert by_url.hash() == by_path.hash()
