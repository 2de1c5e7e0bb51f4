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

Memory is bounded: documents stream straight to their shard file; the dedup table keeps two
64-bit integers per document; the index is built per shard in fixed-size segments.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np

from snapaudit.errors import ConfigError, InputError
from snapaudit.hashing import canonical_json, sha256_file
from snapaudit.progress import Progress, SilentProgress
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
from snapaudit.testbed.corpus.readers import FieldMap, InputPin, read_documents
from snapaudit.testbed.corpus.store import DocStore
from snapaudit.testbed.retrieval.base import Document
from snapaudit.testbed.retrieval.bm25 import build_bm25_index

__all__ = ["MANIFEST", "CorpusInput", "CorpusManifest", "DocStore", "build_corpus",
           "load_manifest", "shard_of", "shard_path", "verify_corpus"]


@dataclass(frozen=True, slots=True)
class CorpusInput:
    """One input file, its format, its field map and an optional id prefix."""

    path: Path
    format: str = "generic"
    fields: FieldMap = field(default_factory=FieldMap)
    id_prefix: str = ""


def _key64(text: str) -> int:
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")


def _iter_inputs(inputs: Sequence[CorpusInput], pins: list[InputPin]) -> Iterator[Document]:
    for spec in inputs:
        pin = InputPin(spec.path.name, spec.format)
        pins.append(pin)
        for doc in read_documents(spec.path, spec.format, spec.fields, pin):
            yield Document(spec.id_prefix + doc.doc_id, doc.url, doc.text) if spec.id_prefix \
                else doc


def _write_shards(docs: Iterable[Document], corpus_dir: Path, n_shards: int, seed: int,
                  progress: Progress) -> int:
    files: list[IO[bytes]] = []
    seen: dict[int, int] = {}
    duplicates = 0
    try:
        for j in range(n_shards):
            files.append(open(shard_path(corpus_dir, j), "wb"))  # noqa: SIM115
        for doc in docs:
            line = canonical_json({"id": doc.doc_id, "url": doc.url, "text": doc.text})
            key, content = _key64(doc.doc_id), _key64(line)
            if key in seen:
                if seen[key] != content:
                    raise InputError(f"document id {doc.doc_id!r} appears twice with "
                                     "different content (use an id prefix per input)")
                duplicates += 1
                continue
            seen[key] = content
            files[shard_of(doc.doc_id, seed, n_shards)].write(line.encode() + b"\n")
            progress.advance()
    finally:
        for f in files:
            f.close()
    return duplicates


def _index_shard_store(corpus_dir: Path, shard: int) -> ShardInfo:
    path = shard_path(corpus_dir, shard)
    offsets: list[int] = []
    ids: list[bytes] = []
    pos = 0
    with open(path, "rb") as f:
        for line in f:
            offsets.append(pos)
            pos += len(line)
            ids.append(json.loads(line)["id"].encode())
    id_arr = np.array(ids, dtype=f"S{max((len(i) for i in ids), default=1)}")
    order = np.argsort(id_arr, kind="stable").astype(np.int64)
    np.save(shard_path(corpus_dir, shard, ".offsets.npy"), np.array(offsets, dtype=np.int64))
    np.save(shard_path(corpus_dir, shard, ".ids.npy"), id_arr)
    np.save(shard_path(corpus_dir, shard, ".ids_sorted.npy"), id_arr[order])
    np.save(shard_path(corpus_dir, shard, ".order.npy"), order)
    return ShardInfo(count=len(ids), bytes=pos, sha256=sha256_file(path))


def build_corpus(inputs: Sequence[CorpusInput], out_dir: str | Path, *, shards: int = 7,
                 seed: int = 0, progress: Progress | None = None,
                 segment_docs: int = 50_000) -> CorpusManifest:
    """Ingest ``inputs`` into ``out_dir`` (new or empty), shard, index BM25, write manifest."""
    progress = progress if progress is not None else SilentProgress()
    corpus_dir = Path(out_dir)
    if shards < 1:
        raise ConfigError("a corpus needs at least one shard")
    if corpus_dir.exists() and any(corpus_dir.iterdir()):
        raise ConfigError(f"{corpus_dir}: corpus output directory is not empty")
    (corpus_dir / "shards").mkdir(parents=True, exist_ok=True)
    pins: list[InputPin] = []
    progress.stage("ingest documents")
    dups = _write_shards(_iter_inputs(inputs, pins), corpus_dir, shards, seed, progress)
    progress.stage("document store", total=shards)
    infos = []
    for j in range(shards):
        infos.append(_index_shard_store(corpus_dir, j))
        progress.advance()
    build_bm25_index(corpus_dir, shards, progress=progress, segment_docs=segment_docs)
    manifest = CorpusManifest(
        seed=seed, shards=infos, total=sum(s.count for s in infos), duplicates=dups,
        inputs=[InputInfo(**p.to_json()) for p in pins])
    (corpus_dir / MANIFEST).write_text(canonical_json(manifest.model_dump(mode="json")) + "\n",
                                       encoding="utf-8")
    return manifest
