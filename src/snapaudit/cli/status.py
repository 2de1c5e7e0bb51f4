"""``snapaudit status DIR``: verify a run directory and show its progress and locks."""

from __future__ import annotations

import json
from pathlib import Path

import click


@click.command("status")
@click.argument("run_dir", type=click.Path(file_okay=False, exists=True, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the status as JSON.")
def command(run_dir: Path, as_json: bool) -> None:
    """Stage progress, attempts by outcome and locks of RUN_DIR (after an integrity check)."""
    from snapaudit.run.after.status import format_status, run_status

    status = run_status(run_dir)
    if as_json:
        click.echo(json.dumps(status.to_json(), indent=2, sort_keys=True))
    else:
        click.echo(format_status(status))
