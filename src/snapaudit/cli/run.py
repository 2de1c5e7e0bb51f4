"""``snapaudit run``: every stage not yet locked, then the analysis."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from snapaudit.cli._common import make_progress, progress_option, set_option

EXIT_INCOMPATIBLE = 4
EXIT_NOT_EVALUABLE = 5


@click.command("run")
@click.argument("protocol_path", metavar="PROTOCOL.toml",
                type=click.Path(dir_okay=False, path_type=Path))
@click.option("--run-dir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The run directory (created on the first run; resumed afterwards).")
@set_option
@progress_option
@click.option("--dry-run", is_flag=True,
              help="Print the calls, estimated tokens and cost per stage; call nothing.")
@click.option("--fail-on", "fail_on", type=click.Choice(["incompatible"]), default=None,
              help="Exit 4 when the release gate finds excess churn, 5 when the gate "
                   "could not be evaluated.")
def command(protocol_path: Path, run_dir: Path, overrides: tuple[str, ...],
            progress_kind: str, fail_on: str | None, dry_run: bool = False) -> None:
    """Run (or resume) the audit of PROTOCOL.toml in --run-dir and write results.json."""
    if dry_run:
        from snapaudit.run.dryrun import plan, render
        from snapaudit.run.protocol import load_protocol

        protocol = load_protocol(protocol_path, list(overrides))
        click.echo(render(plan(protocol, protocol_path.resolve().parent)), nl=False)
        return
    from snapaudit.run.engine import run_protocol_file

    progress = make_progress(progress_kind)
    try:
        outcome = run_protocol_file(protocol_path, run_dir, list(overrides), progress)
    finally:
        progress.close()
    gate = outcome.results.get("gate", {})
    passed = bool(gate.get("passed"))
    click.echo(f"wrote {outcome.results_path}")
    for kernel, stats in sorted(outcome.results.get("kernels", {}).items()):
        click.echo(f"{kernel:<9} D = {stats['d_hat']:+.2f} pp  (lcb95 {stats['lcb95']:+.2f} pp)")
    not_evaluable = gate.get("verdict") == "not_evaluable"
    click.echo("gate: " + ("NOT EVALUABLE: " + str(gate.get("reason")) if not_evaluable
                           else "excess churn found (incompatible)" if passed
                           else "no excess churn shown"))
    for rule in gate.get("rules", []):
        mark = "pass" if rule.get("passed") else "fail"
        note = f" ({rule['note']})" if rule.get("note") else ""
        click.echo(f"  [{mark}] {rule.get('rule')}{note}")
    if fail_on == "incompatible":
        exit_for_gate(gate)


def exit_for_gate(gate: dict[str, object]) -> None:
    """``--fail-on incompatible``: exit 4 on excess churn, 5 on a gate not evaluable."""
    if gate.get("verdict") == "not_evaluable":
        sys.exit(EXIT_NOT_EVALUABLE)
    if gate.get("passed"):
        sys.exit(EXIT_INCOMPATIBLE)
