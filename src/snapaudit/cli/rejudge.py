"""``snapaudit rejudge RUN_DIR --judge JUDGE.toml|SPEC --out NEW_RUN_DIR [--gate PROFILE]``."""

from __future__ import annotations

from pathlib import Path

import click

from snapaudit.cli._common import make_progress, progress_option


@click.command("rejudge")
@click.argument("run_dir", metavar="RUN_DIR",
                type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--judge", "judge", required=True, metavar="JUDGE.toml|SPEC",
              help="A TOML file with the new [judge] table, or a short form: 'rule' (the "
                   "offline rule judge, no API key), 'openai:MODEL@URL', ...")
@click.option("--gate", "gate_profile", type=click.Choice(["study", "long-form", "exact-only"]),
              default=None, help="Gate the new run with this profile (at the parent's "
                                 "min_d_pp); default: the parent's gate. 'long-form' gates on "
                                 "the semantic kernel alone (sentence answers).")
@click.option("--out", "out", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The new run directory (created; resumed when run again).")
@progress_option
def command(run_dir: Path, judge: str, gate_profile: str | None, out: Path,
            progress_kind: str) -> None:
    """Judge RUN_DIR's locked answers again with a new judge, in a new run: no system is
    called; the new run's protocol names its parent (lineage)."""
    from snapaudit.run.after.rejudge import rejudge

    progress = make_progress(progress_kind)
    try:
        outcome = rejudge(run_dir, judge, out, progress,
                          gate_profile)  # type: ignore[arg-type]
    finally:
        progress.close()
    click.echo(f"wrote {outcome.results_path}")
    from snapaudit.report.summary import run_summary

    click.echo(run_summary(out, outcome.record), nl=False)
