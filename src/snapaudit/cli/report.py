"""``snapaudit report DIR``: write DIR/report.html and DIR/report.md."""

from __future__ import annotations

from pathlib import Path

import click


@click.command("report")
@click.argument("run_dir", metavar="DIR", type=click.Path(file_okay=False, exists=True,
                                                          path_type=Path))
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path),
              default=None, help="Where to write the report (default: DIR).")
@click.option("--fail-on", "fail_on", type=click.Choice(["regressions"]), default=None,
              help="Exit 6 when a reviewed regression stands (snapaudit review: some "
                   "annotator's last decision on a changed question is 'regression').")
def command(run_dir: Path, out_dir: Path | None, fail_on: str | None) -> None:
    """Write the self-contained HTML report and its Markdown twin for a finished run."""
    from snapaudit.report.build import write_report

    paths = write_report(run_dir, out_dir)
    click.echo(paths.report.verdict)
    if paths.report.small_sample:
        click.echo(f"{paths.report.small_sample}; treat this verdict as provisional")
    for line in paths.changes:
        click.echo(line)
    click.echo(f"wrote {paths.html}")
    click.echo(f"wrote {paths.markdown}")
    if fail_on == "regressions":
        from snapaudit.cli.run import exit_on_regressions

        exit_on_regressions(paths.review)
