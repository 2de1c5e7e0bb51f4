"""Distributed exact BM25: shard servers' merged top-k equal one index built on the prefix."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from click.testing import CliRunner

from snapaudit.cli import cli, main
from snapaudit.testbed.corpus.build import DocStore
from snapaudit.testbed.retrieval.bm25 import Bm25Retriever
from snapaudit.testbed.retrieval.distributed import ShardedBm25
from tests.testbed.conftest import WORDS, generated_docs


def _queries(n: int, seed: int = 11) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choice((*WORDS, "unknownword", "The")) for _ in range(rng.randint(1, 4)))
            for _ in range(n)]


def _single_index(make_corpus, corpus: Path, prefix: int) -> Bm25Retriever:  # type: ignore[no-untyped-def]
    store = DocStore(corpus)
    rows = [{"id": d.doc_id, "url": d.url, "text": d.text}
            for j in range(prefix) for d in store.iter_shard(j)]
    return Bm25Retriever(make_corpus(rows, shards=1))


def _same(got: list, want: list) -> None:  # type: ignore[type-arg]
    assert [h.doc_id for h in got] == [h.doc_id for h in want]
    for g, w in zip(got, want, strict=True):
        assert abs(g.score - w.score) <= 1e-9


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from snapaudit.testbed.corpus.build import CorpusInput, build_corpus
    from tests.testbed.conftest import write_jsonl

    tmp = tmp_path_factory.mktemp("dist")
    src = write_jsonl(tmp / "in.jsonl", generated_docs(500, seed=3))
    build_corpus([CorpusInput(src)], tmp / "c", shards=7, seed=2, segment_docs=20)
    return tmp / "c"


def test_local_servers_equal_single_index_on_200_queries(make_corpus, sharded: Path) -> None:  # type: ignore[no-untyped-def]
    queries = _queries(200)
    with ShardedBm25(sharded, workers=2) as pool, ShardedBm25(sharded) as inline:
        for prefix in (1, 4, 7):
            ref = _single_index(make_corpus, sharded, prefix)
            want = [ref.search(q, 1, 8) for q in queries]
            assert sum(len(w) for w in want) > 1000  # real lists, with many tied scores
            for got in (pool.search_many(queries, prefix, 8), inline.search_many(queries,
                                                                                  prefix, 8)):
                for g, w in zip(got, want, strict=True):
                    _same(g, w)
            local = Bm25Retriever(sharded)
            for q, w in zip(queries[:50], want[:50], strict=True):
                _same(local.search(q, prefix, 8), w)
        assert pool.search("alpha", 0, 8) == []


def test_cli_search_json_and_queries_file(sharded: Path, tmp_path: Path,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    qfile = tmp_path / "q.txt"
    qfile.write_text("alpha river\n\nomega stone\n", encoding="utf-8")
    res = CliRunner().invoke(cli, ["corpus", "search", str(sharded), "--prefix", "n3",
                                   "--query", "lantern", "--queries", str(qfile), "--k", "3",
                                   "--json"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.output.splitlines()]
    assert [r["query"] for r in rows] == ["lantern", "alpha river", "omega stone"]
    ref = Bm25Retriever(sharded)
    for r in rows:
        assert r["prefix"] == "n3"
        assert r["hits"] == [{"id": h.doc_id, "score": h.score}
                             for h in ref.search(r["query"], 3, 3)]
        assert len(r["hits"]) == 3
    text = CliRunner().invoke(cli, ["corpus", "search", str(sharded), "--prefix", "2",
                                    "--query", "lantern"])
    assert text.exit_code == 0 and "prefix n2" in text.output and " 1. " in text.output
    with pytest.raises(SystemExit) as exc:
        main(["corpus", "search", str(sharded), "--prefix", "n9", "--query", "x"])
    assert exc.value.code != 0
    assert "outside 0..7" in capsys.readouterr().err


@pytest.mark.slow
def test_ray_servers_and_ray_build_are_exact(make_corpus, sharded: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("ray", reason="the Ray engine needs the `ray` extra "
                                      "(pip install 'snapaudit[ray]')")
    import hashlib

    import ray

    from snapaudit.testbed.corpus.build import CorpusInput, build_corpus
    from tests.testbed.conftest import write_jsonl

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             logging_level="ERROR", configure_logging=False)
    try:
        queries = _queries(200, seed=5)
        ref = _single_index(make_corpus, sharded, 5)
        with ShardedBm25(sharded, engine="ray", workers=2) as index:
            for g, w in zip(index.search_many(queries, 5, 8),
                            [ref.search(q, 1, 8) for q in queries], strict=True):
                _same(g, w)
        src = write_jsonl(tmp_path / "in.jsonl", generated_docs(200, seed=4))
        build_corpus([CorpusInput(src)], tmp_path / "local", shards=3, segment_docs=25)
        build_corpus([CorpusInput(src)], tmp_path / "ray", shards=3, segment_docs=25,
                     engine="ray", workers=2)

        def tree(root: Path) -> dict[str, str]:
            return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
                    for p in sorted(root.rglob("*")) if p.is_file()}

        assert tree(tmp_path / "local") == tree(tmp_path / "ray")
    finally:
        ray.shutdown()
