"""``snapaudit export DIR --out ARTIFACT``: the sanitized, verifiable artifact of a run."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("export")
@click.argument("run_dir", metavar="DIR", type=click.Path(file_okay=False, exists=True,
                                                          path_type=Path))
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The artifact directory to create (must not exist).")
def command(run_dir: Path, out: Path) -> None:
    """Write ID-only manifests, sanitized cells and attempts, locks, results and claims."""
    from snapaudit.artifact.export import export_artifact

    dest = export_artifact(run_dir, out)
    click.echo(f"wrote {dest}")
    click.echo(f"check it with: snapaudit verify {dest}")
