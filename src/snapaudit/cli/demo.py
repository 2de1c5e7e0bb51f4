"""``snapaudit demo``: a complete locked audit of the embedded demo world, then its report."""

from __future__ import annotations

from pathlib import Path

import click

from snapaudit.cli._common import make_progress, progress_option, set_option


@click.command("demo")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("snapaudit-demo"), show_default=True,
              help="Where to write the world, the run and the report (re-run to resume).")
@click.option("--questions", type=click.IntRange(5, 500), default=16, show_default=True,
              help="Questions in the world.")
@click.option("--seed", type=int, default=7, show_default=True, help="Seed of the world.")
@click.option("--llama-server", "llama_server_port", type=int, default=None, metavar="PORT",
              help="Answer through llama-cpp-python's OpenAI-compatible server started on "
                   "127.0.0.1:PORT (needs the server extra).")
@click.option("--paths", type=click.IntRange(1, 16), default=1, show_default=True,
              help="Random corpus paths ([testbed.paths] count): K shard orders of the same "
                   "world, in OUT/run-paths-K.")
@set_option
@progress_option
def command(out: Path, questions: int, seed: int, overrides: tuple[str, ...],
            progress_kind: str, llama_server_port: int | None, paths: int) -> None:
    """Generate the demo world, run every stage on the local generator and rule judge, and
    write the report. No network, no GPU, no API key."""
    from snapaudit.demo.run import DemoConfig, run_demo
    from snapaudit.report.model import num
    from snapaudit.report.summary import run_summary
    from snapaudit.stats.results import result_from_json

    progress = make_progress(progress_kind)
    try:
        outcome = run_demo(DemoConfig(out, questions, seed, overrides=overrides,
                                      llama_server_port=llama_server_port, paths=paths),
                           progress)
    finally:
        progress.close()

    click.echo(run_summary(outcome.run_dir, result_from_json(outcome.results)), nl=False)
    if "paths" in outcome.results:
        from snapaudit.report.paths import paths_summary

        click.echo(paths_summary(outcome.results["paths"]), nl=False)
    score = outcome.plant_score
    if score is not None:
        click.echo(f"planted flips: recall {num(score['recall'])}, precision "
                   f"{num(score['precision'])} ({score['hits']} of {score['planted']} planted "
                   f"flips flagged, {score['flagged']} flagged in all)")
    click.echo(f"report: {outcome.report_html}")
