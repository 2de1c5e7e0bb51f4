"""Corpus readers: files (JSONL, JSON, Parquet, gzip variants) -> documents (id, url, text).

Every reader yields :class:`~snapaudit.testbed.retrieval.base.Document` records through one mapping
path, :func:`map_record`, shared by the local readers and the Hugging Face streaming loader.
Formats (``--format``):

``generic``   fields named by a :class:`FieldMap` (default ``id``, ``url``, ``text``)
``fineweb``   FineWeb rows ``{"id", "text", "url"?, ...}``; a missing url stays empty
``c4``        C4 rows ``{"text", "url", "timestamp"}``; id = ``c4-`` + sha256(url)[:20]
``dolma``     Dolma / Common Crawl rows ``{"id": url, "text", "metadata", ...}``; the url is the id
``dpr``       DPR Wikipedia passages ``{"id", "contents": "\\"Title\\"\\ntext"}``; the title is
              kept as the first line of the text, the url is the English Wikipedia page
``nq-oracle`` NQ-open oracle rows ``{"question", "ctxs": [{"title", "text"}, ...]}``; every ctx
              becomes ``nqo-`` + sha256(title + newline + text)[:20], so the id is stable and
              identical passages share it

Containers are chosen by file name: ``.parquet``; ``.json`` (a JSON array, or JSON lines when
the first non-blank byte is not ``[``); anything else is JSON lines; a ``.gz`` suffix adds
gzip. Streaming containers are hashed while read (size and sha256 of the file's own bytes);
Parquet, which needs random access, is hashed in a separate sequential pass.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, cast

from snapaudit.errors import InputError
from snapaudit.hashing import sha256_text
from snapaudit.testbed.retrieval.base import Document

FORMATS = ("generic", "fineweb", "c4", "dolma", "dpr", "nq-oracle")
WIKI_URL = "https://en.wikipedia.org/wiki/"


@dataclass(frozen=True, slots=True)
class FieldMap:
    """Which record fields hold the id, url and text (``generic`` format)."""

    id: str = "id"
    url: str = "url"
    text: str = "text"


@dataclass(slots=True)
class InputPin:
    """Size and sha256 of one input file, filled in while it is read."""

    name: str
    format: str
    size: int = 0
    sha256: str = ""
    records: int = 0
    documents: int = 0
    _hash: Any = field(default_factory=hashlib.sha256, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "format": self.format, "size": self.size,
                "sha256": self.sha256, "records": self.records, "documents": self.documents}


class _HashingReader(io.RawIOBase):
    """A read-through wrapper that hashes and counts every byte."""

    def __init__(self, raw: BinaryIO, pin: InputPin):
        self._raw, self._pin = raw, pin

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        data = self._raw.read(len(buffer))
        n = len(data)
        buffer[:n] = data
        self._pin._hash.update(data)
        self._pin.size += n
        return n


def _text_of(value: Any) -> str:
    return "" if value is None else str(value)


def _stable(prefix: str, text: str) -> str:
    return prefix + sha256_text(text)[:20]


def _map_generic(rec: dict[str, Any], fields: FieldMap) -> Iterator[Document]:
    yield Document(_text_of(rec.get(fields.id)), _text_of(rec.get(fields.url)),
                   _text_of(rec.get(fields.text)))


def _map_fineweb(rec: dict[str, Any], fields: FieldMap) -> Iterator[Document]:
    yield Document(_text_of(rec.get("id")), _text_of(rec.get("url")), _text_of(rec.get("text")))


def _map_c4(rec: dict[str, Any], fields: FieldMap) -> Iterator[Document]:
    url, text = _text_of(rec.get("url")), _text_of(rec.get("text"))
    doc_id = _text_of(rec.get("id")) or _stable("c4-", url or text)
    yield Document(doc_id, url, text)


def _map_dolma(rec: dict[str, Any], fields: FieldMap) -> Iterator[Document]:
    doc_id = _text_of(rec.get("id"))
    meta = rec.get("metadata")
    url = _text_of(rec.get("url") or (meta.get("url") if isinstance(meta, dict) else None))
    if not url and doc_id.startswith(("http://", "https://")):
        url = doc_id
    yield Document(doc_id, url, _text_of(rec.get("text")))


def split_dpr_contents(contents: str) -> tuple[str, str]:
    """``"Title"\\ntext`` -> (title, text); contents without a title line give ("", contents)."""
    head, sep, body = contents.partition("\n")
    if sep and len(head) >= 2 and head.startswith('"') and head.endswith('"'):
        return head[1:-1], body
    return "", contents


def _wiki_url(title: str) -> str:
    return WIKI_URL + title.replace(" ", "_") if title else ""


def _map_dpr(rec: dict[str, Any], fields: FieldMap) -> Iterator[Document]:
    title, body = split_dpr_contents(_text_of(rec.get("contents")))
    text = f"{title}\n{body}" if title else body
    yield Document(_text_of(rec.get("id")), _wiki_url(title), text)


def _map_nq_oracle(rec: dict[str, Any], fields: FieldMap) -> Iterator[Document]:
    for ctx in rec.get("ctxs") or ():
        title, body = _text_of(ctx.get("title")), _text_of(ctx.get("text"))
        yield Document(_stable("nqo-", f"{title}\n{body}"), _wiki_url(title),
                       f"{title}\n{body}" if title else body)


Mapper = Callable[[dict[str, Any], FieldMap], Iterator[Document]]
MAPPERS: dict[str, Mapper] = {
    "generic": _map_generic, "fineweb": _map_fineweb, "c4": _map_c4, "dolma": _map_dolma,
    "dpr": _map_dpr, "nq-oracle": _map_nq_oracle,
}


def map_record(rec: Any, fmt: str, fields: FieldMap = FieldMap()) -> Iterator[Document]:
    """The one record -> documents path of every reader (local files and streaming)."""
    if fmt not in MAPPERS:
        raise InputError(f"unknown corpus format {fmt!r} (known: {', '.join(FORMATS)})")
    if not isinstance(rec, dict):
        raise InputError(f"a {fmt} record must be a JSON object, got {type(rec).__name__}")
    yield from MAPPERS[fmt](rec, fields)


def _json_records(stream: BinaryIO, path: Path) -> Iterator[tuple[int, Any]]:
    text = io.TextIOWrapper(stream, encoding="utf-8")
    first = text.read(1)
    while first and first.isspace():
        first = text.read(1)
    if first == "[" and ".json" in path.suffixes:
        try:
            rows = json.loads(first + text.read())
        except ValueError as exc:
            raise InputError(f"invalid JSON: {exc}", path=str(path)) from exc
        if not isinstance(rows, list):
            raise InputError("a JSON corpus file must hold an array", path=str(path))
        yield from enumerate(rows, start=1)
        return
    yield from _jsonl_records(first, text, path)


def _jsonl_records(first: str, text: io.TextIOWrapper, path: Path) -> Iterator[tuple[int, Any]]:
    for lineno, line in enumerate(text, start=1):
        line = first + line if lineno == 1 else line
        if not line.strip():
            continue
        try:
            yield lineno, json.loads(line)
        except ValueError as exc:
            raise InputError(f"invalid JSON line: {exc}", path=str(path), line=lineno) from exc


def _parquet_records(source: Any, batch_rows: int) -> Iterator[tuple[int, Any]]:
    """Rows of a Parquet file, ``batch_rows`` at a time (arrow reads one row group's columns)."""
    import pyarrow.parquet as pq

    row = 0
    pf = pq.ParquetFile(source)
    try:
        for batch in pf.iter_batches(batch_size=batch_rows):
            for rec in batch.to_pylist():
                row += 1
                yield row, rec
    finally:
        pf.close()


def is_url(path: str | Path) -> bool:
    """``scheme://...`` inputs are opened with fsspec (``s3://``, ``gs://``, ``https://``...)."""
    return "://" in str(path)


def input_name(path: str | Path) -> str:
    """The file name of a local path or URL (what the manifest pins)."""
    return str(path).rstrip("/").rsplit("/", 1)[-1] if is_url(path) else Path(path).name


def open_input(path: str | Path) -> BinaryIO:
    """A local file, or an fsspec URL when fsspec (and the filesystem's package) is installed."""
    if not is_url(path):
        return open(path, "rb")
    try:
        import fsspec
    except ImportError as exc:
        raise InputError("reading a URL needs the fsspec package (and its filesystem, "
                         "e.g. s3fs)", path=str(path)) from exc
    try:
        return cast(BinaryIO, fsspec.open(str(path), "rb").open())
    except (OSError, ValueError, ImportError) as exc:
        raise InputError(f"cannot open: {exc}", path=str(path)) from exc


def _sha256_stream(path: str | Path) -> tuple[int, str]:
    h, size = hashlib.sha256(), 0
    with open_input(path) as f:
        while block := f.read(1 << 20):
            h.update(block)
            size += len(block)
    return size, h.hexdigest()


def read_documents(path: str | Path, fmt: str, fields: FieldMap = FieldMap(),
                   pin: InputPin | None = None, batch_rows: int = 4096) -> Iterator[Document]:
    """Stream the documents of one file or URL; ``pin`` receives its size and sha256 by the
    end. Parquet is read ``batch_rows`` rows at a time."""
    source = str(path)
    path = Path(input_name(source)) if is_url(source) else Path(source)
    pin = pin if pin is not None else InputPin(path.name, fmt)
    if path.suffix == ".parquet":
        with open_input(source) as f:
            yield from _mapped(_parquet_records(f, batch_rows), fmt, fields, path, pin)
        pin.size, pin.sha256 = _sha256_stream(source)
        return
    with open_input(source) as raw:
        hashed = io.BufferedReader(_HashingReader(raw, pin), buffer_size=1 << 20)
        stream = cast(BinaryIO, gzip.GzipFile(fileobj=hashed) if path.suffix == ".gz" else hashed)
        name = path.with_suffix("") if path.suffix == ".gz" else path
        yield from _mapped(_json_records(stream, name), fmt, fields, path, pin)
        while block := raw.read(1 << 20):  # bytes the parser did not need (e.g. gzip tail)
            pin._hash.update(block)
            pin.size += len(block)
    pin.sha256 = pin._hash.hexdigest()


def _mapped(records: Iterator[tuple[int, Any]], fmt: str, fields: FieldMap, path: Path,
            pin: InputPin) -> Iterator[Document]:
    for lineno, rec in records:
        pin.records += 1
        try:
            docs = list(map_record(rec, fmt, fields))
        except InputError as exc:
            raise InputError(exc.problem, path=str(path), line=lineno) from exc
        for doc in docs:
            if not doc.doc_id:
                raise InputError(f"record has no document id ({fmt})", path=str(path),
                                 line=lineno)
            pin.documents += 1
            yield doc


def stream_fineweb(sample: str = "sample-10BT", limit: int | None = None,
                   dataset: str = "HuggingFaceFW/fineweb") -> Iterator[Document]:
    """FineWeb from the Hugging Face hub, streamed (needs the ``hf`` extra and network).

    Records go through the same :func:`map_record` path (format ``fineweb``) as local files.
    """
    try:
        from datasets import load_dataset
    except ImportError as exc:
        from snapaudit.errors import BackendError

        raise BackendError("streaming FineWeb needs `pip install 'snapaudit[hf]'`") from exc
    rows = load_dataset(dataset, name=sample, split="train", streaming=True)
    for n, rec in enumerate(rows):
        if limit is not None and n >= limit:
            return
        yield from map_record(dict(rec), "fineweb")
