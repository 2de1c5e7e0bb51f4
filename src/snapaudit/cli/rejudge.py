"""``snapaudit rejudge RUN_DIR --judge JUDGE.toml --out NEW_RUN_DIR``."""

from __future__ import annotations

from pathlib import Path

import click

from snapaudit.cli._common import make_progress, progress_option


@click.command("rejudge")
@click.argument("run_dir", metavar="RUN_DIR",
                type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--judge", "judge_path", required=True,
              type=click.Path(dir_okay=False, exists=True, path_type=Path),
              help="A TOML file with the new [judge] table.")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The new run directory (created; resumed when run again).")
@progress_option
def command(run_dir: Path, judge_path: Path, out: Path, progress_kind: str) -> None:
    """Judge RUN_DIR's locked answers again with a new judge, in a new run: no system is
    called; the new run's protocol names its parent (lineage)."""
    from snapaudit.run.after.rejudge import rejudge

    progress = make_progress(progress_kind)
    try:
        outcome = rejudge(run_dir, judge_path, out, progress)
    finally:
        progress.close()
    click.echo(f"wrote {outcome.results_path}")
    for kernel, stats in sorted(outcome.results.get("kernels", {}).items()):
        click.echo(f"{kernel:<9} D = {stats['d_hat']:+.2f} pp  (lcb95 {stats['lcb95']:+.2f} pp)")
    click.echo(f"gate: {outcome.results.get('gate', {}).get('verdict')}")
