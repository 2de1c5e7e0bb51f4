"""``snapaudit judge-audit DIR --judge SPEC --sample N``."""

from __future__ import annotations

from pathlib import Path

import click

from snapaudit.cli._common import make_progress, progress_option


@click.command("judge-audit")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--judge", "judge_spec", required=True, metavar="SPEC",
              help="A TOML file with a [judge] table, or rule | openai:MODEL@URL | "
                   "anthropic:MODEL@URL | local:MODEL (NAME=SPEC names it).")
@click.option("--sample", type=click.IntRange(min=1), default=100, show_default=True,
              help="Questions in the outcome-blind hash sample.")
@progress_option
def command(run_dir: Path, judge_spec: str, sample: int, progress_kind: str) -> None:
    """Have a second judge label a blind sample of a run's pairs; report agreement."""
    from snapaudit.judge.spec import parse_judge_spec
    from snapaudit.run.judge_audit_run import judge_audit

    config = parse_judge_spec(judge_spec)
    outcome = judge_audit(run_dir, config, sample, make_progress(progress_kind))
    result, path = outcome.agreement, outcome.audit_path
    a, b = result.judges
    kappa = "n/a" if result.kappa is None else f"{result.kappa:.3f}"
    click.echo(f"judges {a} vs {b}: {result.pairs} pairs, {result.questions} questions")
    click.echo(f"agreement {result.agreement:.1f}% (95% CI {result.agreement_ci95[0]:.1f}-"
               f"{result.agreement_ci95[1]:.1f}), kappa {kappa}")
    click.echo(f"identical partitions {result.partitions_identical:.1f}% of questions")
    for name, d in result.d_hat.items():
        click.echo(f"semantic D under {name}: {'n/a' if d is None else f'{d:+.2f} pp'}")
    click.echo(f"written {path}")
    if outcome.results_path is not None:
        click.echo(f"updated {outcome.results_path} (judges section)")
