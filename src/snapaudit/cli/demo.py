"""``snapaudit demo``: a complete locked audit of the embedded demo world, then its report."""

from __future__ import annotations

from pathlib import Path

import click

from snapaudit.cli._common import make_progress, progress_option, set_option


@click.command("demo")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path),
              default=Path("snapaudit-demo"), show_default=True,
              help="Where to write the world, the run and the report (re-run to resume).")
@click.option("--questions", type=click.IntRange(5, 500), default=None,
              help="Questions in the world [default: 16, or 10 per look with --looks].")
@click.option("--seed", type=int, default=7, show_default=True, help="Seed of the world.")
@click.option("--llama-server", "llama_server_port", type=int, default=None, metavar="PORT",
              help="Answer through llama-cpp-python's OpenAI-compatible server started on "
                   "127.0.0.1:PORT (needs the server extra).")
@click.option("--paths", type=click.IntRange(1, 16), default=1, show_default=True,
              help="Random corpus paths ([testbed.paths] count): K shard orders of the same "
                   "world, in OUT/run-paths-K.")
@click.option("--looks", type=click.IntRange(1, 50), default=1, show_default=True,
              help="Sequential looks ([design] looks): ask the questions in K blocks and stop "
                   "at the first decisive look, in OUT/run-looks-K.")
@click.option("--agent", is_flag=True, default=False,
              help="Audit a two-step search agent (a query, a second query from what the "
                   "first search found, the embedded model's answer) in states n1 and n7: "
                   "trajectory kernels beside the answers, in OUT/run-agent (docs/agents.md).")
@set_option
@progress_option
def command(out: Path, questions: int | None, seed: int, overrides: tuple[str, ...],
            progress_kind: str, llama_server_port: int | None, paths: int,
            looks: int = 1, agent: bool = False) -> None:
    """Generate the demo world, run every stage on the local generator and rule judge, and
    write the report. No network, no GPU, no API key."""
    from snapaudit.demo.run import DemoConfig, run_demo
    from snapaudit.report.model import num
    from snapaudit.report.summary import run_summary

    progress = make_progress(progress_kind)
    try:
        size = questions if questions is not None else max(16, 10 * looks)
        outcome = run_demo(DemoConfig(out, size, seed, overrides=overrides,
                                      llama_server_port=llama_server_port, paths=paths,
                                      looks=looks, agent=agent), progress)
    finally:
        progress.close()

    click.echo(run_summary(outcome.run_dir, outcome.record), nl=False)
    if outcome.record.paths is not None:
        from snapaudit.report.paths import paths_summary

        click.echo(paths_summary(outcome.record.paths), nl=False)
    score = outcome.plant_score
    if score is not None:
        click.echo(f"planted flips: recall {num(score['recall'])}, precision "
                   f"{num(score['precision'])} ({score['hits']} of {score['planted']} planted "
                   f"flips flagged, {score['flagged']} flagged in all)")
    click.echo(f"report: {outcome.report_html}")
