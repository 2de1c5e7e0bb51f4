"""``snapaudit analyze``: audit answer tables from two snapshots of any system."""

from __future__ import annotations

import json
from pathlib import Path

import click

from snapaudit import atomic, tables
from snapaudit.cli._common import check_output_path
from snapaudit.errors import ConfigError, FieldErrors
from snapaudit.stats.analysis import AnalysisConfig, analyze
from snapaudit.stats.gate import GateConfig

OPTION_NAMES = {"old": "--old", "new": "--new", "ladder": "--ladder", "draws": "--draws",
                "bootstrap": "--bootstrap", "permutations": "--permutations",
                "seed": "--seed", "benchmark": "--benchmark", "primary_judge": "--judge",
                "": "--old/--new/--ladder"}


@click.command("analyze")
@click.option("--answers", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              required=True, help="Answers JSONL (one row per call).")
@click.option("--labels", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Pair labels JSONL (semantic kernel).")
@click.option("--gold", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Gold: snapaudit JSONL, NQ-open JSONL or DPR TriviaQA TSV.")
@click.option("--gold-format", type=click.Choice(tables.GOLD_FORMATS), default="auto",
              show_default=True, help="Format of --gold (auto: detected from the file).")
@click.option("--old", required=True, help="The old state.")
@click.option("--new", required=True, help="The new state.")
@click.option("--ladder", help="Ordered states for the ladder analysis, e.g. n0,n1,n3,n7.")
@click.option("--benchmark", type=click.Choice(["nq", "triviaqa"]), default="nq",
              show_default=True, help="Answer normalization.")
@click.option("--draws", type=int, default=50_000, show_default=True,
              help="Whole-question bootstrap draws (at least 100).")
@click.option("--seed", type=int, default=0, show_default=True,
              help="Seed of the bootstrap stream.")
@click.option("--bootstrap", type=click.Choice(["exact", "draws"]), default="exact",
              show_default=True,
              help="exact: the exact bootstrap of every mean of gridded per-question values "
                   "(D, ladder steps, EM change); draws: Monte Carlo draws everywhere.")
@click.option("--permutations", type=int, default=10_000, show_default=True,
              help="Permutations of the distribution test (0 skips it).")
@click.option("--judge", "primary_judge", help="Primary judge for the semantic kernel.")
@click.option("--gate-profile", type=click.Choice(["study", "long-form", "exact-only"]),
              default="study", show_default=True, help="The release gate's rules.")
@click.option("--fail-on", "fail_on", type=click.Choice(["incompatible"]), default=None,
              help="Exit 4 when the gate finds excess churn, 5 when it cannot be evaluated.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the results JSON here.")
def command(answers: Path, labels: Path | None, gold: Path | None, gold_format: str, old: str,
            new: str, ladder: str | None, benchmark: str, draws: int, seed: int, bootstrap: str,
            permutations: int, primary_judge: str | None, gate_profile: str,
            fail_on: str | None, json_out: Path | None) -> None:
    """Excess churn of NEW over OLD beyond repeat noise, the gate, and diagnostics."""
    if json_out is not None:
        check_output_path(json_out, "--json")
    try:
        config = AnalysisConfig(
            old=old, new=new, benchmark=benchmark, draws=draws, seed=seed,  # type: ignore[arg-type]
            bootstrap=bootstrap,  # type: ignore[arg-type]
            permutations=permutations,
            ladder=tuple(s.strip() for s in ladder.split(",")) if ladder else None,
            primary_judge=primary_judge,
            gate=GateConfig(profile=gate_profile))  # type: ignore[arg-type]
    except FieldErrors as exc:
        raise ConfigError(exc.describe(OPTION_NAMES)) from None
    rows, labs, gold_map = tables.read_tables(answers, labels, gold, gold_format)
    result = analyze(rows, config=config, labels=labs, gold=gold_map)
    from snapaudit.report.summary import render_text  # the report layer, once there is a result

    click.echo(render_text(result, rows, labs), nl=False)
    if json_out is not None:
        atomic.write_text(json_out, json.dumps(result.to_json(), indent=2, ensure_ascii=False,
                                              allow_nan=False) + "\n")
    if fail_on == "incompatible":
        from snapaudit.cli.run import exit_on_verdict

        exit_on_verdict(result.verdict())
