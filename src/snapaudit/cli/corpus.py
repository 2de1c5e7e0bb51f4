"""`snapaudit corpus build|info`: ingest and shard a corpus for the built-in testbed."""

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
              type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="An input file (JSONL, JSON, Parquet, optionally .gz). Repeatable.")
@click.option("--format", "formats", multiple=True, type=click.Choice(FORMATS),
              help="Record format: once for all inputs or once per --input [default: generic].")
@click.option("--id-prefix", "prefixes", multiple=True,
              help="Prefix added to the ids of an input: once for all or once per --input.")
@click.option("--id-field", default="id", show_default=True, help="generic: id field.")
@click.option("--url-field", default="url", show_default=True, help="generic: url field.")
@click.option("--text-field", default="text", show_default=True, help="generic: text field.")
@click.option("--shards", default=7, show_default=True, type=click.IntRange(min=1))
@click.option("--seed", default=0, show_default=True, type=int, help="Seed of the shard hash.")
@click.option("--out", "out_dir", required=True, type=click.Path(path_type=Path),
              help="New or empty output directory.")
@click.option("--dense", is_flag=True,
              help="Also build the dense (MiniLM + FAISS) shard indexes now (extra `dense`).")
@progress_option
def build(inputs: tuple[Path, ...], formats: tuple[str, ...], prefixes: tuple[str, ...],
          id_field: str, url_field: str, text_field: str, shards: int, seed: int,
          out_dir: Path, dense: bool, progress_kind: str) -> None:
    """Ingest INPUT files into SHARDS seeded-hash shards with a BM25 index and a manifest."""
    from snapaudit.testbed.corpus.build import CorpusInput, build_corpus

    fields = FieldMap(id=id_field, url=url_field, text=text_field)
    fmts = _per_input(formats, len(inputs), "--format", "generic")
    pres = _per_input(prefixes, len(inputs), "--id-prefix", "")
    specs = [CorpusInput(p, f, fields, x) for p, f, x in zip(inputs, fmts, pres, strict=True)]
    progress = make_progress(progress_kind)
    try:
        manifest = build_corpus(specs, out_dir, shards=shards, seed=seed, progress=progress)
        if dense:
            from snapaudit.testbed.retrieval.dense import DenseRetriever

            DenseRetriever(out_dir).build()
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
