"""``snapaudit judge-audit DIR --judge SPEC --sample N``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from snapaudit.cli._common import make_progress, progress_option, set_option


@click.command("judge-audit")
@click.argument("run_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--judge", "judge_spec", required=True, metavar="SPEC",
              help="A TOML file with a [judge] table, or rule | openai:MODEL@URL | "
                   "anthropic:MODEL@URL | local:MODEL (NAME=SPEC names it).")
@click.option("--sample", type=click.IntRange(min=1), default=100, show_default=True,
              help="Questions in the outcome-blind hash sample.")
@set_option
@progress_option
def command(run_dir: Path, judge_spec: str, sample: int, overrides: tuple[str, ...],
            progress_kind: str) -> None:
    """Have a second judge label a blind sample of a run's pairs; report agreement.

    --set judge.KEY=VALUE overrides a key of the audit judge's [judge] table (for example
    judge.generator.model); the run's own protocol is locked and cannot change."""
    from snapaudit.judge.spec import parse_judge_spec
    from snapaudit.run.after.judge_audit_run import judge_audit

    config = _override(parse_judge_spec(judge_spec), overrides)
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


def _override(config: Any, overrides: tuple[str, ...]) -> Any:
    """Apply ``judge.*`` overrides to the audit judge's config (revalidated strictly)."""
    if not overrides:
        return config
    from pydantic import ValidationError

    from snapaudit._model import describe_errors
    from snapaudit.errors import ConfigError
    from snapaudit.run.record.protocol import apply_overrides

    bad = [o for o in overrides if not o.strip().startswith("judge.")]
    if bad:
        raise ConfigError(f"--set {bad[0]!r}: judge-audit accepts only judge.* keys (the run's "
                          "protocol is locked)")
    data = apply_overrides({"judge": config.model_dump(mode="json", exclude_none=True)},
                           overrides)
    try:
        return type(config).model_validate_json(json.dumps(data["judge"]), strict=True)
    except ValidationError as exc:
        raise ConfigError("--set: " + "; ".join(
            f"judge.{x}" for x in describe_errors(exc))) from None
