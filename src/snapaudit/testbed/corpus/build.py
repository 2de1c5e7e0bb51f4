"""Corpus ingest: documents -> N seeded-hash shards, a manifest, and a document store.

Construction. Each document goes to shard ``sha256(seed || 0x00 || doc id)[:8] mod N``
(big-endian). The assignment depends only on the seed, N and the id, never on the other
documents, so shard ``j`` is fixed once built, and a state is a *nested prefix*: state k holds
shards ``0 .. k-1``; going from k to k+1 only adds shard k and changes nothing in shards
``0 .. k-1``. Within a shard, documents keep input order. A document id seen again with the
same content is skipped (counted in ``duplicates``); with different content it is an error.

Layout of a corpus directory::

    corpus_manifest.json           written last: its presence marks a complete build
    shards/shard-00.jsonl          one canonical JSON {"id","url","text"} per line
    shards/shard-00.offsets.npy    byte offset of every line
    shards/shard-00.ids.npy        ids in row order; .ids_sorted.npy + .order.npy for lookups
    bm25/...                       the embedded BM25 statistics (snapaudit.testbed.retrieval.bm25)

Streaming and memory. Inputs are read in batches of at most ``batch_docs`` documents
(Parquet: ``batch_docs`` rows at a time, within one row group); each batch streams straight
to its shard files, with the line offsets and ids going to side files. What stays in memory
is one batch, the dedup table (two 64-bit integers per document, in a Python dict: the
sha256 prefix of the id, and Python's keyed hash of the line, only ever compared within this
process) and the running state of the shard files. The BM25 index is built per (shard,
segment of up to ``segment_docs`` rows, smaller first:
:func:`~snapaudit.testbed.retrieval.bm25_build.segment_rows`) by tasks
(:mod:`snapaudit.testbed.retrieval.bm25_build`) that start as soon as their segment is on disk,
on the engine chosen (:mod:`snapaudit.testbed.corpus.executor`): in this process, a local
process pool (``workers`` > 1) or Ray. The output is byte-identical whatever the engine and
worker count.
"""

from __future__ import annotations

import hashlib
import json
import sys
from array import array
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from snapaudit.errors import ConfigError, InputError
from snapaudit.hashing import canonical_json
from snapaudit.progress import Progress, SilentProgress
from snapaudit.testbed.corpus.executor import Engine, Handle, open_engine
from snapaudit.testbed.corpus.manifest import (
    MANIFEST,
    CorpusManifest,
    InputInfo,
    ShardInfo,
    load_manifest,
    shard_of,
    shard_path,
    verify_corpus,
)
from snapaudit.testbed.corpus.readers import FieldMap, InputPin, input_name, read_documents
from snapaudit.testbed.corpus.store import DocStore
from snapaudit.testbed.retrieval.base import Document
from snapaudit.testbed.retrieval.bm25_build import (
    SegmentTask,
    build_segment,
    finish_index,
    segment_rows,
)

__all__ = ["MANIFEST", "CorpusInput", "CorpusManifest", "DocStore", "build_corpus",
           "iter_batches", "load_manifest", "shard_of", "shard_path", "verify_corpus"]


@dataclass(frozen=True, slots=True)
class CorpusInput:
    """One input file (a path, or an fsspec URL as a string), its format, its field map and
    an optional id prefix."""

    path: Path | str
    format: str = "generic"
    fields: FieldMap = field(default_factory=FieldMap)
    id_prefix: str = ""


SEGMENT_DOCS = 50_000
BATCH_DOCS = 4096


def _key64(data: bytes) -> int:
    return int.from_bytes(hashlib.sha256(data).digest()[:8], "big")


_json_str: Callable[[str], str] = json.encoder.encode_basestring  # type: ignore[attr-defined]


def _iter_inputs(inputs: Sequence[CorpusInput], pins: list[InputPin],
                batch_docs: int) -> Iterator[Document]:
    for spec in inputs:
        pin = InputPin(input_name(spec.path), spec.format)
        pins.append(pin)
        for doc in read_documents(spec.path, spec.format, spec.fields, pin,
                                  batch_rows=batch_docs):
            yield Document(spec.id_prefix + doc.doc_id, doc.url, doc.text) if spec.id_prefix \
                else doc


def iter_batches(docs: Iterable[Document], batch_docs: int) -> Iterator[list[Document]]:
    """``docs`` in lists of at most ``batch_docs`` (the unit of work and memory of ingest)."""
    batch: list[Document] = []
    for doc in docs:
        batch.append(doc)
        if len(batch) >= batch_docs:
            yield batch
            batch = []
    if batch:
        yield batch


class _Shard:
    """One shard file being written: its line offsets and ids go to side files (buffered,
    written once per input batch)."""

    def __init__(self, corpus_dir: Path, j: int, seg_end: int):
        self.file = open(shard_path(corpus_dir, j), "wb", buffering=1 << 20)  # noqa: SIM115
        self.offsets = open(shard_path(corpus_dir, j, ".offsets.tmp"), "wb")  # noqa: SIM115
        self.ids = open(shard_path(corpus_dir, j, ".ids.tmp"), "wb")  # noqa: SIM115
        self.hash = hashlib.sha256()
        self.rows = self.pos = self.seg_byte = self.seg_row = 0
        self.segments = 0
        self.seg_end = seg_end  # the row count at which the open segment is full
        self._offsets = array("q")
        self._ids: list[str] = []

    def write(self, line: bytes, doc_id: str) -> None:
        self._offsets.append(self.pos)
        self._ids.append(_json_str(doc_id))
        self.file.write(line)
        self.hash.update(line)
        self.pos += len(line)
        self.rows += 1

    def flush(self) -> None:
        """Side files up to date and the shard file's bytes on disk (for a segment task)."""
        if sys.byteorder != "little":
            self._offsets.byteswap()
        self.offsets.write(self._offsets.tobytes())
        self.ids.write(("\n".join(self._ids) + "\n").encode() if self._ids else b"")
        self._offsets = array("q")
        self._ids = []
        self.file.flush()

    def close(self) -> None:
        self.flush()
        for f in (self.file, self.offsets, self.ids):
            f.close()


def _lines(batch: list[Document]) -> list[bytes]:
    """``canonical_json({"id", "url", "text"}) + "\n"`` of every document, UTF-8: the same
    bytes, faster. A text none of whose bytes JSON escapes (found for the whole batch at
    once) is its own UTF-8 between quotes; the others and ids and urls go through the json
    module's C string encoder, which ``canonical_json`` uses too (``ensure_ascii=False``)."""
    if not all(type(d.doc_id) is str and type(d.url) is str and type(d.text) is str
               for d in batch):
        return [canonical_json({"id": d.doc_id, "url": d.url, "text": d.text}).encode()
                + b"\n" for d in batch]
    texts = [d.text.encode() for d in batch]
    ends = np.cumsum([len(t) for t in texts])
    u8 = np.frombuffer(b"".join(texts), dtype=np.uint8)
    at = np.flatnonzero((u8 < 0x20) | (u8 == 0x22) | (u8 == 0x5C))  # bytes JSON escapes
    escaped = set(np.searchsorted(ends, at, side="right").tolist())
    return [b"".join((b'{"id":', _json_str(d.doc_id).encode(), b',"text":',
                      _json_str(d.text).encode() if i in escaped else b'"' + t + b'"',
                      b',"url":', _json_str(d.url).encode(), b"}\n"))
            for i, (d, t) in enumerate(zip(batch, texts, strict=True))]


class _Ingest:
    """Dedup, shard assignment and writing; submits a segment task as each segment fills."""

    def __init__(self, corpus_dir: Path, n_shards: int, seed: int, segment_docs: int,
                 engine: Engine):
        self.dir, self.n, self.seed, self.segment_docs = corpus_dir, n_shards, seed, segment_docs
        self.engine = engine
        self.seen: dict[int, int] = {}
        self.duplicates = 0
        self.shards: list[_Shard] = []
        self.handles: list[Handle] = []
        for j in range(n_shards):
            self.shards.append(_Shard(corpus_dir, j, segment_rows(0, segment_docs)))

    def add(self, batch: list[Document]) -> None:
        seen, shards = self.seen, self.shards
        for doc, line in zip(batch, _lines(batch), strict=True):
            key, content = _key64(doc.doc_id.encode()), hash(line)
            if key in seen:
                if seen[key] != content:
                    raise InputError(f"document id {doc.doc_id!r} appears twice with "
                                     "different content (use an id prefix per input)")
                self.duplicates += 1
                continue
            seen[key] = content
            j = shard_of(doc.doc_id, self.seed, self.n)
            shard = shards[j]
            shard.write(line, doc.doc_id)
            if shard.rows == shard.seg_end:
                self._submit(j, shard)
        for shard in shards:
            shard.flush()

    def _submit(self, j: int, shard: _Shard) -> None:
        shard.flush()
        task = SegmentTask(str(self.dir), j, shard.segments, shard.seg_row, shard.seg_byte,
                           shard.pos)
        self.handles.append(self.engine.submit(build_segment, task))
        shard.segments += 1
        shard.seg_byte, shard.seg_row = shard.pos, shard.rows
        shard.seg_end = shard.rows + segment_rows(shard.segments, self.segment_docs)

    def close(self) -> list[int]:
        for j, shard in enumerate(self.shards):
            if shard.rows > shard.seg_row:
                self._submit(j, shard)
            shard.close()
        return [s.segments for s in self.shards]


def _finish_store(corpus_dir: Path, shard: _Shard, j: int) -> ShardInfo:
    tmp_off, tmp_ids = shard_path(corpus_dir, j, ".offsets.tmp"), shard_path(corpus_dir, j,
                                                                            ".ids.tmp")
    offsets = np.fromfile(tmp_off, dtype="<i8").astype(np.int64)
    with open(tmp_ids, "rb") as f:
        ids = [line[1:-2] if 92 not in line else json.loads(line).encode() for line in f]
    id_arr = np.array(ids, dtype=f"S{max((len(i) for i in ids), default=1)}")
    order = np.argsort(id_arr, kind="stable").astype(np.int64)
    np.save(shard_path(corpus_dir, j, ".offsets.npy"), offsets)
    np.save(shard_path(corpus_dir, j, ".ids.npy"), id_arr)
    np.save(shard_path(corpus_dir, j, ".ids_sorted.npy"), id_arr[order])
    np.save(shard_path(corpus_dir, j, ".order.npy"), order)
    tmp_off.unlink()
    tmp_ids.unlink()
    return ShardInfo(count=len(ids), bytes=shard.pos, sha256=shard.hash.hexdigest())


def build_corpus(inputs: Sequence[CorpusInput], out_dir: str | Path, *, shards: int = 7,
                 seed: int = 0, progress: Progress | None = None,
                 segment_docs: int = SEGMENT_DOCS, batch_docs: int = BATCH_DOCS,
                 engine: str = "local", workers: int = 1,
                 address: str | None = None) -> CorpusManifest:
    """Ingest ``inputs`` into ``out_dir`` (new or empty), shard, index BM25, write manifest."""
    progress = progress if progress is not None else SilentProgress()
    corpus_dir = Path(out_dir)
    if shards < 1:
        raise ConfigError("a corpus needs at least one shard")
    if segment_docs < 1 or batch_docs < 1:
        raise ConfigError("segment_docs and batch_docs must be at least 1")
    if corpus_dir.exists() and any(corpus_dir.iterdir()):
        raise ConfigError(f"{corpus_dir}: corpus output directory is not empty")
    (corpus_dir / "shards").mkdir(parents=True, exist_ok=True)
    pins: list[InputPin] = []
    with open_engine(engine, workers, address) as eng:
        ingest = _Ingest(corpus_dir, shards, seed, segment_docs, eng)
        eng.set_ingesting(True)
        try:
            progress.stage("ingest documents")
            for batch in iter_batches(_iter_inputs(inputs, pins, batch_docs), batch_docs):
                ingest.add(batch)
                eng.poll()
                progress.advance(len(batch))
        finally:
            segments = ingest.close()
            eng.set_ingesting(False)
        progress.stage("document store", total=shards)
        infos = []
        for j, shard in enumerate(ingest.shards):
            infos.append(_finish_store(corpus_dir, shard, j))
            progress.advance()
        progress.stage("bm25 index", total=len(ingest.handles))
        peak = 0
        for handle in ingest.handles:
            peak = max(peak, handle.result()["rss_kb"])
            progress.advance()
        progress.info(f"bm25 index: {len(ingest.handles)} segment tasks on {eng.workers} "
                      f"worker(s) ({engine}); peak task-process RSS {peak / 1024:.0f} MiB")
    finish_index(corpus_dir, shards, segments)
    manifest = CorpusManifest(
        seed=seed, shards=infos, total=sum(s.count for s in infos),
        duplicates=ingest.duplicates, inputs=[InputInfo(**p.to_json()) for p in pins])
    (corpus_dir / MANIFEST).write_text(canonical_json(manifest.model_dump(mode="json")) + "\n",
                                       encoding="utf-8")
    return manifest
