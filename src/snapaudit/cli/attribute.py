"""``snapaudit attribute DIR``: which document caused each flagged change of answer."""

from __future__ import annotations

from pathlib import Path

import click

from snapaudit.cli._common import make_progress, progress_option


@click.command("attribute")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--max-questions", type=click.IntRange(min=1), default=50, show_default=True,
              help="Questions to attribute: the strict flips, then the largest D_i.")
@click.option("--max-calls", type=click.IntRange(min=0), default=None,
              help="Budget of calls, generations and judge packets together (default "
                   "4 x (repeats + 1 with a judge) x entering documents per question, at "
                   "most 2000).")
@click.option("--dry-run", is_flag=True,
              help="Print the calls still to make, their tokens and cost, and stop.")
@click.option("--documents", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="JSONL {id, url, text} of the documents a Python or HTTP "
                                 "system's answers name (its counterfactual evidence).")
@progress_option
def command(run_dir: Path, max_questions: int, max_calls: int | None, dry_run: bool,
            documents: Path | None, progress_kind: str) -> None:
    """Answer counterfactual evidence lists of a finished testbed run (each entering
    document swapped in and out) with the new state's generator, judge them against the
    old and new answers, and name the documents that caused each change."""
    from snapaudit.run.after.attribution_run import attribute_run

    progress = make_progress(progress_kind)
    try:
        outcome = attribute_run(run_dir, progress, max_questions=max_questions,
                                max_calls=max_calls, dry_run=dry_run, documents=documents)
    finally:
        progress.close()
    calls = f"calls: {outcome.planned_calls} planned, {outcome.pending_calls} to make"
    if outcome.table is None:  # a dry run
        from snapaudit.run.after.attribution_cost import TOKENS_NOTE
        from snapaudit.run.after.dryrun import render

        over = " (over it: the command would stop)" if outcome.pending_calls > outcome.budget \
            else ""
        click.echo(render(outcome.stages, tokens_note=TOKENS_NOTE)
                   + f"{calls}\nbudget: {outcome.budget} calls (--max-calls){over}")
        return
    click.echo(calls)
    for row in outcome.table.questions:
        caused = ", ".join(row.caused) or "-"
        agreement = "n/a" if row.agreement is None else f"{row.agreement:.2f}"
        click.echo(f"{row.question_id}: {row.verdict} (agreement {agreement}; caused: "
                   f"{caused})")
    click.echo(f"updated {outcome.results_path} (attribution section)")
    from snapaudit.report.build import write_report
    from snapaudit.run.record.rundir import RunDir

    if RunDir(run_dir, read_only=True).report_html.exists():  # keep the report current
        click.echo(f"updated {write_report(run_dir).html}")
