from __future__ import annotations

import gzip
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from snapaudit.errors import InputError
from snapaudit.hashing import sha256_file, sha256_text
from snapaudit.testbed.corpus.readers import (
    FieldMap,
    InputPin,
    map_record,
    read_documents,
    split_dpr_contents,
)

ROWS = [{"doc": "a", "link": "https://a", "body": "x y"}, {"doc": "b", "link": None, "body": "z"}]
FIELDS = FieldMap(id="doc", url="link", text="body")


def _expected() -> list[tuple[str, str, str]]:
    return [("a", "https://a", "x y"), ("b", "", "z")]


def _read(path: Path, fmt: str = "generic", fields: FieldMap = FIELDS) -> tuple[list, InputPin]:
    pin = InputPin(path.name, fmt)
    docs = [(d.doc_id, d.url, d.text) for d in read_documents(path, fmt, fields, pin)]
    return docs, pin


@pytest.mark.parametrize("name", ["in.jsonl", "in.jsonl.gz", "in.json", "in.json.gz",
                                  "lines.json", "in.parquet"])
def test_every_container_maps_fields_and_pins_the_file(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    if name.endswith(".parquet"):
        pq.write_table(pa.Table.from_pylist(ROWS), path)
    else:
        as_array = name.startswith("in.json") and ".jsonl" not in name
        text = json.dumps(ROWS) if as_array else "".join(json.dumps(r) + "\n" for r in ROWS)
        data = text.encode()
        path.write_bytes(gzip.compress(data, mtime=0) if name.endswith(".gz") else data)
    docs, pin = _read(path)
    assert docs == _expected()
    assert (pin.size, pin.sha256) == (path.stat().st_size, sha256_file(path))
    assert (pin.records, pin.documents) == (2, 2)


def test_format_mappers() -> None:
    c4 = next(map_record({"text": "t", "url": "https://c4", "timestamp": "x"}, "c4"))
    assert c4.doc_id == "c4-" + sha256_text("https://c4")[:20] and c4.url == "https://c4"
    dolma = next(map_record({"id": "http://cc/x", "text": "t", "metadata": {}}, "dolma"))
    assert (dolma.doc_id, dolma.url) == ("http://cc/x", "http://cc/x")
    fw = next(map_record({"id": 0, "text": "t", "token_count": 1}, "fineweb"))
    assert (fw.doc_id, fw.url, fw.text) == ("0", "", "t")
    dpr = next(map_record({"id": "7", "contents": '"Big Ben"\nThe clock.'}, "dpr"))
    assert (dpr.url, dpr.text) == ("https://en.wikipedia.org/wiki/Big_Ben", "Big Ben\nThe clock.")
    rec = {"question": "q", "ctxs": [{"title": "T", "text": "a"}, {"title": "U", "text": "b"}]}
    ids = [d.doc_id for d in map_record(rec, "nq-oracle")]
    assert ids == ["nqo-" + sha256_text("T\na")[:20], "nqo-" + sha256_text("U\nb")[:20]]


def test_split_dpr_contents_without_title() -> None:
    assert split_dpr_contents('"A"\nb\nc') == ("A", "b\nc")
    assert split_dpr_contents("no title") == ("", "no title")


def test_bad_inputs_name_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"id": "a", "text": "x"}\n{oops\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.jsonl:2: invalid JSON line"):
        list(read_documents(path, "generic"))
    path.write_text('{"text": "no id"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=r"bad.jsonl:1: record has no document id"):
        list(read_documents(path, "generic"))
    with pytest.raises(InputError, match="unknown corpus format"):
        list(map_record({}, "nope"))


@pytest.mark.shared_data
def test_real_formats_load(shared_data: Path) -> None:
    web = shared_data / "web"
    cases = [(web / "fineweb_subset_300.json", "fineweb", 300),
             (web / "c4-sample.01.json.gz", "c4", None),
             (web / "cc_en_head-0091.jsonl.gz", "dolma", None),
             (shared_data / "wikipedia" / "dpr_wiki_passages_1000.jsonl", "dpr", 1000),
             (shared_data / "nq_open" / "nq-open-oracle.jsonl.gz", "nq-oracle", 2655)]
    for path, fmt, count in cases:
        pin = InputPin(path.name, fmt)
        docs = list(read_documents(path, fmt, pin=pin))
        assert docs and all(d.doc_id and d.text for d in docs), fmt
        assert pin.sha256 == sha256_file(path) and pin.size == path.stat().st_size
        if count is not None:
            assert len(docs) == count
        if fmt in ("c4", "dolma"):
            assert all(d.url.startswith("http") for d in docs)


def test_streaming_fineweb_needs_the_hf_extra() -> None:
    import importlib.util

    from snapaudit.errors import BackendError
    from snapaudit.testbed.corpus.readers import stream_fineweb

    if importlib.util.find_spec("datasets") is not None:
        pytest.skip("datasets is installed; the hub is never called in tests")
    with pytest.raises(BackendError, match=r"snapaudit\[hf\]"):
        next(stream_fineweb("sample-10BT", limit=1))
