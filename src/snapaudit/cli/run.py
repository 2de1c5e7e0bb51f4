"""``snapaudit run``: every stage not yet locked, then the analysis."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from snapaudit.cli._common import make_progress, progress_option, set_option

if TYPE_CHECKING:
    from snapaudit.results import ReviewSummary
    from snapaudit.run.record.protocol import Protocol
    from snapaudit.stats.verdict import Verdict


def default_run_dir(name: str) -> Path:
    """``runs/<protocol name>``, the name made safe as one folder name."""
    return Path("runs") / (re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "run")


def smoke_run_dir(run_dir: Path, limit: int) -> Path:
    """The separate folder of a ``--limit N`` smoke run: ``<run-dir>.smoke-N``."""
    return run_dir.with_name(f"{run_dir.name}.smoke-{limit}")


@click.command("run")
@click.argument("protocol_path", metavar="PROTOCOL.toml",
                type=click.Path(dir_okay=False, path_type=Path))
@click.option("--run-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="The run directory (created on the first run; resumed afterwards). "
                   "Default: runs/<protocol name>.")
@click.option("--limit", type=click.IntRange(min=1), default=None, metavar="N",
              help="Smoke run: only the first N questions of the cohort, in the separate "
                   "folder <run-dir>.smoke-N (never mixed into the full run).")
@set_option
@progress_option
@click.option("--dry-run", is_flag=True,
              help="Print the calls, estimated tokens and cost per stage; call nothing.")
@click.option("--forget-batch", "forget", multiple=True, metavar="LOCAL_ID",
              help="Before resuming: end this open provider batch without its results (its "
                   "provider deleted it) so that its requests go into a new batch. Repeatable.")
@click.option("--fail-on", "fail_on",
              type=click.Choice(["incompatible", "not-compatible", "regressions"]),
              multiple=True,
              help="incompatible: exit 4 when the verdict is INCOMPATIBLE (the release gate "
                   "established excess churn), 5 when it is NOT EVALUABLE. not-compatible "
                   "(needs [gate] margin_pp): also exit 7 when UNDECIDED, 0 only when "
                   "COMPATIBLE. regressions: exit "
                   "6 when a reviewed regression stands (snapaudit review: some annotator's "
                   "last decision on a changed question is 'regression'). Repeatable; the "
                   "verdict's code comes first.")
def command(protocol_path: Path, run_dir: Path | None, limit: int | None,
            overrides: tuple[str, ...], progress_kind: str, fail_on: tuple[str, ...],
            dry_run: bool = False, forget: tuple[str, ...] = ()) -> None:
    """Run (or resume) the audit of PROTOCOL.toml and write results.json; a finished run
    only prints its summary."""
    from snapaudit.errors import ConfigError
    from snapaudit.report.summary import run_summary
    from snapaudit.run.engine import run_audit
    from snapaudit.run.record.protocol import load_protocol
    from snapaudit.run.record.rundir import RunDir

    if dry_run and forget:
        raise ConfigError("--forget-batch changes the run; it cannot go with --dry-run")
    if dry_run:
        from snapaudit.run.after.dryrun import paths_notes, plan, render
        from snapaudit.run.dialect import dry_run_notes

        planned = load_protocol(protocol_path, list(overrides))
        if limit is not None:  # the smoke run's cohort: its first `limit` questions
            if limit > planned.cohort.size:
                raise ConfigError(f"--limit {limit} is larger than cohort.size = "
                                  f"{planned.cohort.size}")
            planned = load_protocol(protocol_path, [*overrides, f"cohort.size={limit}"])
        click.echo(render(plan(planned, protocol_path.resolve().parent),
                          [*paths_notes(planned), *dry_run_notes(planned)]), nl=False)
        return

    sets = list(overrides)
    protocol = load_protocol(protocol_path, sets)
    if "not-compatible" in fail_on and protocol.gate.margin_pp is None:
        from snapaudit.stats.verdict import NEEDS_MARGIN

        raise ConfigError(NEEDS_MARGIN.format(where="[gate] margin_pp"))
    target = run_dir if run_dir is not None else default_run_dir(protocol.name)
    if limit is not None:
        if limit > protocol.cohort.size:
            raise ConfigError(f"--limit {limit} is larger than cohort.size = "
                              f"{protocol.cohort.size}")
        target = smoke_run_dir(target, limit)
        sets += [f"cohort.size={limit}",
                 f"name={_toml_str(f'{protocol.name} (smoke run: first {limit} questions)')}"]
        protocol = load_protocol(protocol_path, sets)
    if forget:
        from snapaudit.run.execution.batch_status import forget_batches

        for row in forget_batches(target, forget):
            known_as = row.provider_batch_id or "no provider id"
            click.echo(f"forgot batch {row.local_id} ({known_as}): its {row.n_requests} "
                       "requests go into a new batch", err=True)
    complete = RunDir(target).results_path.exists()
    if complete and not forget:
        from snapaudit.run.after.readonly import finished_results, read_only_finished

        if read_only_finished(target):  # nothing can be written: verify, print, done
            results = finished_results(protocol, target)
            _check_finished_systems(protocol, target, protocol_path.resolve().parent)
            click.echo(f"run already complete: {target} is read-only; its results were "
                       "verified, not re-written")
            click.echo(run_summary(target, results), nl=False)
            exit_on(fail_on, results.verdict(), results.review)
            return
    progress = make_progress(progress_kind)
    try:
        outcome = run_audit(protocol, target, base_dir=protocol_path.resolve().parent,
                            progress=progress)
    finally:
        progress.close()
    if limit is not None:
        click.echo(f"SMOKE RUN: first {limit} questions only, in {target}; not a release "
                   "verdict")
    if complete:
        click.echo(f"run already complete: every stage of {target} is locked; results "
                   "re-checked")
    click.echo(f"wrote {outcome.results_path}")
    click.echo(run_summary(target, outcome.record), nl=False)
    exit_on(fail_on, outcome.record.verdict(), outcome.record.review)


def exit_on(fail_on: tuple[str, ...], verdict: Verdict, review: ReviewSummary | None
            ) -> None:
    """``--fail-on``: the verdict's exit code first (``incompatible``), then 6 when a
    reviewed regression stands (``regressions``), or return."""
    if "incompatible" in fail_on or "not-compatible" in fail_on:
        exit_on_verdict(verdict, require_compatible="not-compatible" in fail_on)
    if "regressions" in fail_on:
        exit_on_regressions(review)


def exit_on_regressions(review: ReviewSummary | None) -> None:
    """``--fail-on regressions``: exit 6 when ``review`` (results.json's ``review``) counts a
    standing regression."""
    from snapaudit.run.analysis.review import standing_regressions
    from snapaudit.stats.verdict import EXIT_REGRESSIONS

    count = standing_regressions(review)
    if count:
        click.echo(f"{count} reviewed regression(s) stand (snapaudit review)", err=True)
        sys.exit(EXIT_REGRESSIONS)


def exit_on_verdict(verdict: Verdict, require_compatible: bool = False) -> None:
    """``--fail-on incompatible``: exit with :func:`~snapaudit.stats.verdict.exit_code`
    (4 on INCOMPATIBLE, 5 on NOT EVALUABLE), or return; ``not-compatible``
    (``require_compatible``): 7 on UNDECIDED too."""
    from snapaudit.stats.verdict import exit_code

    code = exit_code(verdict, require_compatible)
    if code:
        sys.exit(code)


def _check_finished_systems(protocol: Protocol, run_dir: Path, base_dir: Path) -> None:
    """A read-only finished run: its Python systems' code compared, nothing recorded."""
    from snapaudit.run.bound_systems import check_systems, live_specs
    from snapaudit.run.record.rundir import RunDir

    live = live_specs(protocol, base_dir, {})
    if live is not None:
        with RunDir(run_dir, read_only=True) as rd:
            check_systems(rd.ledger(), live, record=False, base_dir=base_dir)


def _toml_str(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
