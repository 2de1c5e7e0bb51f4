"""Building the BM25 statistics of a corpus: one task per (shard, segment), any engine.

A segment is a fixed range of shard rows: :func:`segment_rows` gives the first four of each
shard 1/16, 1/8, 1/4 and 1/2 of ``segment_docs`` rows, the others ``segment_docs`` (the last
one shorter). Small first segments fill early in ingest, so that index tasks start on a
second core soon after ingest starts and keep it busy from then on, also when a shard holds
fewer than ``segment_docs`` rows (at 100,000 documents in 7 shards, the first segments fill
after a fifth of the input; with a quarter first they filled at seven eighths, and the second
core waited for ingest to end). A query costs the same whatever the number of segments
(:mod:`snapaudit.testbed.retrieval.bm25_prefix` joins them).
Its task reads only its byte range of the shard file, counts terms in batches of
``BATCH_DOCS`` documents (:func:`~snapaudit.testbed.retrieval.bm25_count.count_batch`) and
writes one CSR segment plus the segment's document lengths. Its output depends on nothing
but those bytes and its first row, so the index is byte-identical whichever engine runs the
tasks, in whatever order, on however many workers. :func:`finish_index` then joins the
per-segment document lengths into ``doclen.npy`` per shard and writes ``bm25/meta.json``.

Memory of one task: the documents of one batch (streamed from the shard file), plus the
postings of one segment (12 bytes per distinct term of a document while counting, about
three times that while sorting them for the write), plus the segment's vocabulary.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from snapaudit.hashing import canonical_json
from snapaudit.testbed.retrieval.bm25_count import TermTable, count_batch
from snapaudit.testbed.retrieval.tokenize import TOKENIZER

INDEX_VERSION = 1
BATCH_DOCS = 256


def shard_dir(corpus_dir: Path, shard: int) -> Path:
    return corpus_dir / "bm25" / f"shard-{shard:02d}"


@dataclass(frozen=True, slots=True)
class SegmentTask:
    """Rows ``row_lo ..`` of ``shard`` (bytes ``byte_lo .. byte_hi`` of its file) -> ``seg``."""

    corpus_dir: str
    shard: int
    seg: int
    row_lo: int
    byte_lo: int
    byte_hi: int


def _batches(path: Path, byte_lo: int, byte_hi: int) -> Iterator[list[str]]:
    """The texts of the lines in ``byte_lo .. byte_hi``, ``BATCH_DOCS`` at a time (streamed)."""
    with open(path, "rb") as f:
        f.seek(byte_lo)
        left = byte_hi - byte_lo
        batch: list[str] = []
        while left > 0:
            line = f.readline()
            if not line:
                break
            left -= len(line)
            batch.append(_text(line))
            if len(batch) == BATCH_DOCS:
                yield batch
                batch = []
        if batch:
            yield batch


def segment_rows(seg: int, segment_docs: int) -> int:
    """Rows of segment ``seg`` of a shard (the last one may be shorter): 1/16, 1/8, 1/4, 1/2
    of ``segment_docs``, then ``segment_docs`` (at least one row)."""
    return max(1, segment_docs >> max(0, 4 - seg))


def _text(line: bytes) -> str:
    """The text of a canonical shard line ``{"id":..,"text":..,"url":..}``. Without a
    backslash no string holds an escaped quote, so the text is the bytes between the
    ``"text":"`` key and the ``","url":"`` that follows it (same as ``json.loads``)."""
    if 92 not in line:  # no "\\"
        i, j = line.find(b'"text":"'), line.rfind(b'","url":"')
        if 0 < i < j:
            return line[i + 8: j].decode()
    text: str = json.loads(line)["text"]
    return text


def build_segment(task: SegmentTask) -> dict[str, int]:
    """Count the segment's documents and write its CSR arrays; returns docs, tokens and this
    process's peak RSS in KiB (the worker's, on a pool or Ray)."""
    from snapaudit.testbed.corpus.manifest import shard_path

    path = shard_path(Path(task.corpus_dir), task.shard)
    table = TermTable()
    gids, rows, tfs, lens = [], [], [], []
    n_rows = 0
    for texts in _batches(path, task.byte_lo, task.byte_hi):
        counts = count_batch(texts, table)
        gids.append(counts.gids.astype(np.int32))
        rows.append((counts.docs + n_rows).astype(np.int32))
        tfs.append(counts.tfs.astype(np.int32))
        lens.append(counts.doc_lens)
        n_rows += len(texts)
    out = shard_dir(Path(task.corpus_dir), task.shard) / f"seg-{task.seg:03d}"
    doclen = np.concatenate(lens).astype(np.int32) if lens else np.zeros(0, np.int32)
    kept = ~table.stop  # stopwords have no postings: not terms of the segment
    words = table.words if kept.all() else [w for w, k in zip(table.words, kept.tolist(),
                                                               strict=True) if k]
    del table
    remap = (np.cumsum(kept) - 1).astype(np.int32)
    arrays = [remap[_cat(gids)], _cat(rows), _cat(tfs)]
    gids.clear()
    rows.clear()
    tfs.clear()
    _write_segment(out, words, arrays, n_rows, task.row_lo)
    np.save(out / "doclen.npy", doclen)
    return {"docs": n_rows, "tokens": int(doclen.sum(dtype=np.int64)), "rss_kb": _peak_rss_kb()}


def _peak_rss_kb() -> int:
    """This process's peak resident set (Linux VmHWM: since its own exec, unlike ru_maxrss)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _cat(parts: list[Any]) -> Any:
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)


def _write_segment(out: Path, vocab: list[str], arrays: list[Any], n_rows: int,
                   row_lo: int) -> None:
    """CSR by term (terms sorted by UTF-8 bytes), rows ascending within a term. ``arrays``
    (term ids, rows, tfs: int32) is emptied as they are used, to keep the peak low."""
    out.mkdir(parents=True, exist_ok=True)
    words = np.array("\n".join(vocab).encode().split(b"\n"), dtype=np.bytes_)[: len(vocab)]
    del vocab
    order = np.argsort(words, kind="stable")
    rank = np.empty(len(order), dtype=np.int32)
    rank[order] = np.arange(len(order), dtype=np.int32)
    gids = arrays[0]
    arrays[0] = tids = rank[gids] if len(gids) else np.zeros(0, dtype=np.int32)
    del gids
    indptr = np.zeros(len(order) + 1, dtype=np.int64)
    np.cumsum(np.bincount(tids, minlength=len(order)), out=indptr[1:])
    np.save(out / "terms.npy", words[order])
    np.save(out / "indptr.npy", indptr)
    del tids
    out_rows, out_tfs = _sort_postings(arrays, n_rows)
    out_rows += np.int32(row_lo)
    np.save(out / "rows.npy", out_rows.astype(np.int32, copy=False))
    del out_rows
    np.save(out / "tfs.npy", out_tfs.astype(np.int32, copy=False))


def _sort_postings(arrays: list[Any], n_rows: int) -> tuple[Any, Any]:
    """Rows and tfs of ``arrays`` (term ids, rows, tfs; emptied) ordered by (term, row),
    pairs that are unique. One in-place sort of (term, row, tf) packed in 64 bits when they
    fit, else an argsort of (term, row)."""
    tids, rows, tfs = arrays
    arrays.clear()
    row_bits = max(n_rows, 1).bit_length()
    tf_bits = int(tfs.max()).bit_length() if len(tfs) else 1
    term_bits = int(tids.max()).bit_length() if len(tids) else 1
    if row_bits + tf_bits + term_bits > 64:
        key = tids.astype(np.int64) * max(n_rows, 1) + rows
        perm = np.argsort(key)
        return rows[perm], tfs[perm]
    key = tids.astype(np.uint64)
    key <<= np.uint64(row_bits + tf_bits)
    part = rows.astype(np.uint64)
    part <<= np.uint64(tf_bits)
    key |= part
    part[:] = tfs
    key |= part
    del part, tids, rows, tfs
    key.sort()
    tf_out = (key & np.uint64((1 << tf_bits) - 1)).astype(np.int32)
    key >>= np.uint64(tf_bits)
    key &= np.uint64((1 << row_bits) - 1)
    return key.astype(np.int32), tf_out


def finish_index(corpus_dir: Path, n_shards: int, segments: list[int]) -> None:
    """Join per-segment document lengths per shard, write ``bm25/meta.json``."""
    shards = []
    for j in range(n_shards):
        out = shard_dir(corpus_dir, j)
        out.mkdir(parents=True, exist_ok=True)
        parts = [out / f"seg-{s:03d}" / "doclen.npy" for s in range(segments[j])]
        lens = [np.load(p) for p in parts]
        doclen = np.concatenate(lens) if lens else np.zeros(0, dtype=np.int32)
        np.save(out / "doclen.npy", doclen.astype(np.int32))
        for p in parts:
            p.unlink()
        shards.append({"docs": len(doclen), "tokens": int(doclen.sum(dtype=np.int64)),
                       "segments": segments[j]})
    meta = {"version": INDEX_VERSION, "tokenizer": TOKENIZER, "shards": shards}
    (corpus_dir / "bm25" / "meta.json").write_text(canonical_json(meta) + "\n", encoding="utf-8")
