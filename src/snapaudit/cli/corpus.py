"""`snapaudit corpus build|info|search`: ingest and shard a corpus, look into a built one."""

from __future__ import annotations

from pathlib import Path

import click

from snapaudit.cli._common import make_progress, progress_option
from snapaudit.testbed.corpus.readers import FORMATS, FieldMap


def _per_input(values: tuple[str, ...], n: int, name: str, default: str) -> list[str]:
    if not values:
        return [default] * n
    if len(values) == 1:
        return list(values) * n
    if len(values) != n:
        raise click.UsageError(f"give {name} once or once per --input ({n})")
    return list(values)


@click.group("corpus")
def command() -> None:
    """Ingest and shard a corpus for the built-in testbed."""


@command.command("build")
@click.option("--input", "inputs", multiple=True, required=True,
              help="An input file (JSONL, JSON, Parquet, optionally .gz), or an fsspec URL "
                   "(s3://, gs://, https://; needs fsspec). Repeatable.")
@click.option("--format", "formats", multiple=True, type=click.Choice(FORMATS),
              help="Record format: once for all inputs or once per --input [default: generic].")
@click.option("--id-prefix", "prefixes", multiple=True,
              help="Prefix added to the ids of an input: once for all or once per --input.")
@click.option("--id-field", default="id", show_default=True, help="generic: id field.")
@click.option("--url-field", default="url", show_default=True, help="generic: url field.")
@click.option("--text-field", default="text", show_default=True, help="generic: text field.")
@click.option("--shards", default=7, show_default=True, type=click.IntRange(min=1),
              help="Number of seeded-hash shards (states see nested prefixes of them).")
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the shard hash.")
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path),
              help="New or empty output directory.")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local",
              show_default=True, help="Where shard/segment index tasks run (ray: extra `ray`).")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1),
              help="Worker processes (local pool) or CPUs (local Ray).")
@click.option("--address", default=None, help="Ray: join this cluster (ray://HOST:PORT); "
              "its nodes must see the output directory.")
@click.option("--batch-docs", default=4096, show_default=True, type=click.IntRange(min=1),
              help="Documents read per batch (ingest memory is bounded by one batch).")
@click.option("--segment-docs", default=50_000, show_default=True, type=click.IntRange(min=1),
              help="Shard rows per index segment (one task each).")
@click.option("--dense", is_flag=True,
              help="Also build the dense (MiniLM + FAISS) shard indexes now (extra `dense`).")
@progress_option
def build(inputs: tuple[str, ...], formats: tuple[str, ...], prefixes: tuple[str, ...],
          id_field: str, url_field: str, text_field: str, shards: int, seed: int,
          out_dir: Path, engine: str, workers: int, address: str | None, batch_docs: int,
          segment_docs: int, dense: bool, progress_kind: str) -> None:
    """Ingest INPUT files into SHARDS seeded-hash shards with a BM25 index and a manifest."""
    from snapaudit.testbed.corpus.build import CorpusInput, build_corpus
    from snapaudit.testbed.corpus.readers import is_url

    for p in inputs:
        if not is_url(p) and not Path(p).is_file():
            raise click.BadParameter(f"{p}: no such file", param_hint="--input")

    fields = FieldMap(id=id_field, url=url_field, text=text_field)
    fmts = _per_input(formats, len(inputs), "--format", "generic")
    pres = _per_input(prefixes, len(inputs), "--id-prefix", "")
    specs = [CorpusInput(p if is_url(p) else Path(p), f, fields, x)
             for p, f, x in zip(inputs, fmts, pres, strict=True)]
    progress = make_progress(progress_kind)
    try:
        manifest = build_corpus(specs, out_dir, shards=shards, seed=seed, progress=progress,
                                engine=engine, workers=workers, address=address,
                                batch_docs=batch_docs, segment_docs=segment_docs)
        if dense:
            from snapaudit.testbed.retrieval.dense import DenseRetriever

            DenseRetriever(out_dir).build(engine=engine, workers=workers, address=address)
    finally:
        progress.close()
    click.echo(f"{out_dir}: {manifest.total} documents in {len(manifest.shards)} shards "
               f"({manifest.duplicates} duplicates skipped); corpus hash {manifest.hash()}")


@command.command("info")
@click.argument("corpus_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--verify", is_flag=True, help="Re-hash every shard file against the manifest.")
def info(corpus_dir: Path, verify: bool) -> None:
    """Show the manifest of a built corpus: inputs, shards, nested prefix sizes, hash."""
    from snapaudit.testbed.corpus.build import load_manifest, verify_corpus

    manifest = verify_corpus(corpus_dir) if verify else load_manifest(corpus_dir)
    click.echo(f"corpus {corpus_dir}  hash {manifest.hash()}  seed {manifest.seed}  "
               f"schema {manifest.schema_version}")
    for inp in manifest.inputs:
        click.echo(f"  input {inp.name} [{inp.format}] {inp.size} bytes sha256 {inp.sha256} "
                   f"records {inp.records} documents {inp.documents}")
    running = 0
    for j, shard in enumerate(manifest.shards):
        running += shard.count
        click.echo(f"  shard {j:2d}: {shard.count:8d} docs {shard.bytes:12d} bytes "
                   f"sha256 {shard.sha256[:16]}  prefix n{j + 1}: {running} docs")
    click.echo(f"  total {manifest.total} documents, {manifest.duplicates} duplicates skipped"
               + ("; shards verified" if verify else ""))


def _prefix(value: str) -> int:
    text = value[1:] if value[:1] in ("n", "N") else value
    if not text.isdigit():
        raise click.BadParameter(f"{value!r}: give a shard count, n3 or 3", param_hint="--prefix")
    return int(text)


@command.command("search")
@click.argument("corpus_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--prefix", "prefix_text", required=True,
              help="The state: its first N shards, as nN or N (e.g. n3).")
@click.option("--query", "queries", multiple=True, help="A query. Repeatable.")
@click.option("--queries", "queries_file", type=click.Path(exists=True, dir_okay=False,
              path_type=Path), help="A file of queries, one a line.")
@click.option("--k", default=8, show_default=True, type=click.IntRange(min=1),
              help="Documents returned per query.")
@click.option("--engine", type=click.Choice(["local", "ray"]), default="local",
              show_default=True, help="Where the shard servers run.")
@click.option("--workers", default=1, show_default=True, type=click.IntRange(min=1),
              help="Shard servers (1: in this process).")
@click.option("--address", default=None, help="Ray: join this cluster (ray://HOST:PORT).")
@click.option("--k1", default=0.9, show_default=True, type=float, help="BM25 k1.")
@click.option("--b", default=0.4, show_default=True, type=float, help="BM25 b.")
@click.option("--json", "as_json", is_flag=True,
              help='One JSON object per query: {"query", "prefix", "hits": [{"id", "score"}]}.')
def search(corpus_dir: Path, prefix_text: str, queries: tuple[str, ...],
           queries_file: Path | None, k: int, engine: str, workers: int, address: str | None,
           k1: float, b: float, as_json: bool) -> None:
    """The exact BM25 top-k of a prefix of a built corpus, as a state retrieves it."""
    import json

    from snapaudit.testbed.retrieval.distributed import ShardedBm25

    prefix = _prefix(prefix_text)
    texts = list(queries)
    if queries_file is not None:
        texts += [q for q in queries_file.read_text(encoding="utf-8").splitlines() if q.strip()]
    if not texts:
        raise click.UsageError("give --query TEXT or --queries FILE")
    with ShardedBm25(corpus_dir, engine=engine, workers=workers, address=address, k1=k1,
                     b=b) as index:
        results = index.search_many(texts, prefix, k)
    for query, hits in zip(texts, results, strict=True):
        if as_json:
            click.echo(json.dumps({"query": query, "prefix": f"n{prefix}", "hits": [
                {"id": h.doc_id, "score": h.score} for h in hits]}, ensure_ascii=False))
            continue
        click.echo(f"{query}  (prefix n{prefix}, {len(hits)} hits)")
        for rank, h in enumerate(hits, start=1):
            click.echo(f"  {rank:3d}. {h.score:10.6f}  {h.doc_id}")
