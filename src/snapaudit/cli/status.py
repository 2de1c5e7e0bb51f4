"""``snapaudit status DIR``: verify a run directory and show its progress and locks."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command("status")
@click.argument("run_dir", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
@click.option("--failures", "show_failures", is_flag=True,
              help="Also show the latest failed attempt of each failing cell (up to 10 per "
                   "stage) with its error and, for a Python system, its traceback.")
def command(run_dir: Path, as_json: bool, show_failures: bool = False) -> None:
    """Stage progress, attempts by outcome and locks of RUN_DIR (after an integrity check)."""
    from snapaudit.run.after.failure_detail import failed_attempts, format_failures
    from snapaudit.run.after.status import format_status, run_status

    status = run_status(run_dir)
    failures = failed_attempts(run_dir) if show_failures else []
    if as_json:
        doc = status.to_json()
        if show_failures:
            doc["failed_attempts"] = [f.to_json() for f in failures]
        click.echo(json.dumps(doc, indent=2, sort_keys=True))
    else:
        click.echo(format_status(status))
        if show_failures:
            click.echo("")
            click.echo(format_failures(failures))
