"""An HTTP system's document texts (``doc_texts_path``): hashed into the evidence, so the
shared document whose text the new snapshot revised is reported as changed."""

from __future__ import annotations

import json
from pathlib import Path

from snapaudit.hashing import sha256_text
from snapaudit.run.record.protocol import load_protocol, protocol_hash
from tests.fakes.rag_service import FakeRagService, revised
from tests.helpers.cli import exit_code
from tests.helpers.protocol import protocol_text, save_protocol, write_world


def test_revised_texts_under_the_same_id_are_changed_documents(tmp_path: Path) -> None:
    write_world(tmp_path, n=12)
    with FakeRagService() as svc:
        plain = protocol_text(svc, size=12)
        proto = save_protocol(tmp_path, plain.replace('url = "', 'doc_texts_path = "texts"\n'
                                                                 'url = "'))
        assert exit_code(["run", str(proto), "--run-dir", str(tmp_path / "run"),
                          "--progress", "silent"]) == 0
    doc = json.loads((tmp_path / "run" / "results.json").read_text())
    expected = sum(revised(f"q{i:03d}") for i in range(12))
    assert 0 < expected < 12 and doc["overlap"]["changed"] == expected
    rows = [json.loads(x) for x in
            (tmp_path / "run" / "tables" / "answers.jsonl").read_text().splitlines()]
    old = next(r for r in rows if r["state"] == "old")
    assert old["doc_hashes"] == [sha256_text(f"passage {d}") for d in old["doc_ids"]]
    # without the key the protocol hash is what it was before the key existed
    bare = tmp_path / "bare.toml"
    bare.write_text(plain, encoding="utf-8")
    assert "doc_texts_path" not in json.dumps(load_protocol(bare).model_dump(mode="json"))
    assert protocol_hash(load_protocol(bare)) != protocol_hash(load_protocol(proto))
