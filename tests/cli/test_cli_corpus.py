from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from snapaudit.cli import cli
from snapaudit.testbed.corpus.build import load_manifest
from tests.testbed.conftest import write_jsonl


def test_corpus_build_and_info(tmp_path: Path) -> None:
    a = write_jsonl(tmp_path / "a.jsonl", [{"k": f"a{i}", "u": "", "t": f"word {i}"}
                                          for i in range(30)])
    b = write_jsonl(tmp_path / "b.jsonl", [{"id": "1", "contents": '"T"\nbody'}])
    out = tmp_path / "corpus"
    runner = CliRunner()
    res = runner.invoke(cli, ["corpus", "build", "--input", str(a), "--input", str(b),
                              "--format", "generic", "--format", "dpr", "--id-prefix", "",
                              "--id-prefix", "wiki:", "--id-field", "k", "--url-field", "u",
                              "--text-field", "t", "--shards", "3", "--seed", "5",
                              "--out", str(out), "--progress", "silent"])
    assert res.exit_code == 0, res.output
    manifest = load_manifest(out)
    assert manifest.total == 31 and manifest.seed == 5 and len(manifest.shards) == 3
    assert f"corpus hash {manifest.hash()}" in res.output
    ids = {json.loads(line)["id"] for p in (out / "shards").glob("*.jsonl")
           for line in p.read_text().splitlines()}
    assert "wiki:1" in ids and "a0" in ids
    res = runner.invoke(cli, ["corpus", "info", str(out), "--verify"])
    assert res.exit_code == 0, res.output
    assert "prefix n3: 31 docs" in res.output and "shards verified" in res.output
    bad = runner.invoke(cli, ["corpus", "build", "--input", str(a), "--input", str(b),
                              "--format", "generic", "--format", "dpr", "--format", "c4",
                              "--out", str(tmp_path / "x")])
    assert bad.exit_code == 2 and "once per --input" in bad.output
