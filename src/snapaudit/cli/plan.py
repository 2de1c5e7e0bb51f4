"""``snapaudit plan``: questions needed for a target power, from a pilot run."""

from __future__ import annotations

import json
from pathlib import Path

import click

from snapaudit.errors import ConfigError
from snapaudit.run.pilot import pilot_from_run
from snapaudit.stats.plan import plan, render_text


def _targets(text: str) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"--target-d must be numbers separated by commas, got {text!r}") from None
    if not values or any(v <= 0 for v in values):
        raise ConfigError("--target-d needs at least one positive D (pp)")
    return values


@click.command("plan")
@click.argument("pilot", type=click.Path(exists=True, path_type=Path))
@click.option("--target-d", default="3,6,10", show_default=True,
              help="Target true D values in pp, comma separated.")
@click.option("--power", type=float, default=0.8, show_default=True)
@click.option("--old", help="Old state (default: that of the pilot's results.json).")
@click.option("--new", help="New state (default: that of the pilot's results.json).")
@click.option("--judge", help="Judge of the semantic kernel (default: the run's primary).")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the plan as JSON here.")
def command(pilot: Path, target_d: str, power: float, old: str | None, new: str | None,
            judge: str | None, json_out: Path | None) -> None:
    """Questions needed for POWER at each target D, from the per-question D_i of a pilot
    run (PILOT: a run directory or its results.json)."""
    result = plan(pilot_from_run(pilot, old=old, new=new, judge=judge), _targets(target_d),
                  power)
    click.echo(render_text(result), nl=False)
    if json_out is not None:
        json_out.write_text(json.dumps(result.to_json(), indent=2) + "\n", encoding="utf-8")
