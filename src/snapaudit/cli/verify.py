"""``snapaudit verify ARTIFACT [--gold FILE]``: recompute every claim, no network (exit 3
names each claim or file that does not reproduce)."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("verify")
@click.argument("artifact", metavar="ARTIFACT", type=click.Path(file_okay=False, exists=True,
                                                                path_type=Path))
@click.option("--gold", "gold", type=click.Path(dir_okay=False, exists=True, path_type=Path),
              default=None, help="The gold file, to verify the gold-dependent claims too.")
def command(artifact: Path, gold: Path | None) -> None:
    """Check completeness, the lock chain and every claim of ARTIFACT."""
    from snapaudit.artifact.verify import verify_artifact

    report = verify_artifact(artifact, gold)
    for note in report.notes:
        click.echo(f"note: {note}")
    click.echo(f"verified: {report.checked} claims reproduce")
    if report.skipped:
        click.echo(f"not checked: {len(report.skipped)} gold-dependent claims "
                   "(pass --gold FILE to check them)")
