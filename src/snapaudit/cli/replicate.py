"""``snapaudit replicate DIR --generator SPEC --sample N --states OLD,NEW``."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click

from snapaudit.cli._common import make_progress, progress_option


def _states(value: str | None) -> tuple[str, str] | None:
    if value is None:
        return None
    parts = [p.strip() for p in value.split(",")]
    if len(parts) != 2 or not all(parts) or parts[0] == parts[1]:
        raise click.BadParameter("give two different states as OLD,NEW")
    return parts[0], parts[1]


@click.command("replicate")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--generator", "generator_spec", required=True, metavar="SPEC",
              help="A TOML file with a [generator] table, or openai:MODEL@URL | "
                   "anthropic:MODEL@URL | local:MODEL.")
@click.option("--sample", type=click.IntRange(min=1), default=100, show_default=True,
              help="Questions in the outcome-blind hash sample.")
@click.option("--states", "states", default=None, metavar="OLD,NEW",
              help="The two states to rerun (default: the protocol's old and new).")
@click.option("--judge", "judge_spec", default=None, metavar="SPEC",
              help="Judge of the replicated answers (default: the run's judge).")
@progress_option
def command(run_dir: Path, generator_spec: str, sample: int, states: str | None,
            judge_spec: str | None, progress_kind: str) -> None:
    """Rerun two locked states with a second generator; compare D with the original."""
    from snapaudit.judge.spec import parse_generator_spec, parse_judge_spec
    from snapaudit.run.stages.replicate import replicate_run_dir

    generator = parse_generator_spec(generator_spec)
    judge = parse_judge_spec(judge_spec) if judge_spec else None
    result, path = asyncio.run(replicate_run_dir(
        run_dir, generator, sample, _states(states), judge, make_progress(progress_kind)))
    click.echo(f"replication on {len(result.question_ids)} questions")
    for kernel, stats in result.replicated.kernels.items():
        orig = result.original.kernels.get(kernel)
        paired = result.paired.get(kernel)
        line = f"{kernel}: D {stats.d_hat:+.2f} pp (original {orig.d_hat:+.2f} pp)" if orig \
            else f"{kernel}: D {stats.d_hat:+.2f} pp"
        if paired is not None:
            line += (f", paired difference {paired.point:+.2f} pp "
                     f"(95% CI {paired.ci95[0]:+.2f} to {paired.ci95[1]:+.2f})")
        click.echo(line)
    click.echo(f"strict flips: {result.replicated.flips.count} "
               f"(original {result.original.flips.count})")
    if result.scope_note:
        click.echo(f"note: {result.scope_note}")
    click.echo(f"written {path}")
