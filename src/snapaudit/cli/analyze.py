"""``snapaudit analyze``: audit answer tables from two snapshots of any system."""

from __future__ import annotations

from pathlib import Path

import click

from snapaudit import tables
from snapaudit.cli._common import check_output_path
from snapaudit.errors import ConfigError, FieldErrors
from snapaudit.stats.analysis import AnalysisConfig, analyze
from snapaudit.stats.gate import GateConfig
from snapaudit.stats.verdict import NEEDS_MARGIN

OPTION_NAMES = {"old": "--old", "new": "--new", "ladder": "--ladder", "draws": "--draws",
                "bootstrap": "--bootstrap", "permutations": "--permutations",
                "seed": "--seed", "benchmark": "--benchmark", "primary_judge": "--judge",
                "looks": "--looks", "planned_questions": "--planned-questions",
                "margin_pp": "--margin", "": "--old/--new/--ladder"}


@click.command("analyze")
@click.option("--answers", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              required=True, help="Answers: JSONL or Parquet (one row per call).")
@click.option("--labels", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Pair labels: JSONL or Parquet (semantic kernel).")
@click.option("--gold", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              help="Gold: snapaudit JSONL or Parquet, NQ-open JSONL or DPR TriviaQA TSV.")
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
@click.option("--margin", "margin_pp", type=float, default=None, metavar="PP",
              help="Compatibility margin (pp): COMPATIBLE when every gate kernel's one-sided "
                   "95%% upper bound of D is below it; else UNDECIDED unless INCOMPATIBLE.")
@click.option("--looks", type=int, default=1, show_default=True,
              help="Sequential looks: decide on K blocks of questions in the order of their "
                   "first appearance in the answers, stopping at the first decisive look, "
                   "the error held over every look (docs/analysis.md).")
@click.option("--planned-questions", type=int, default=None, metavar="N",
              help="With --looks: the questions the design planned (default: the table's); "
                   "a run that stopped early holds fewer.")
@click.option("--fail-on", "fail_on", type=click.Choice(["incompatible", "not-compatible"]),
              default=None,
              help="incompatible: exit 4 when the gate finds excess churn, 5 when it cannot be "
                   "evaluated. not-compatible (needs --margin): also exit 7 when UNDECIDED, "
                   "0 only when COMPATIBLE.")
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Write the results JSON here.")
def command(answers: Path, labels: Path | None, gold: Path | None, gold_format: str, old: str,
            new: str, ladder: str | None, benchmark: str, draws: int, seed: int, bootstrap: str,
            permutations: int, primary_judge: str | None, gate_profile: str,
            margin_pp: float | None, looks: int, planned_questions: int | None,
            fail_on: str | None, json_out: Path | None) -> None:
    """Excess churn of NEW over OLD beyond repeat noise, the gate, and diagnostics."""
    if json_out is not None:
        check_output_path(json_out, "--json")
    if fail_on == "not-compatible" and margin_pp is None:
        raise ConfigError(NEEDS_MARGIN.format(where="--margin PP"))
    try:
        config = AnalysisConfig(
            old=old, new=new, benchmark=benchmark, draws=draws, seed=seed,  # type: ignore[arg-type]
            bootstrap=bootstrap,  # type: ignore[arg-type]
            permutations=permutations,
            ladder=tuple(s.strip() for s in ladder.split(",")) if ladder else None,
            primary_judge=primary_judge, looks=looks, planned_questions=planned_questions,
            gate=GateConfig(profile=gate_profile, margin_pp=margin_pp))  # type: ignore[arg-type]
    except FieldErrors as exc:
        raise ConfigError(exc.describe(OPTION_NAMES)) from None
    rows, labs, gold_map = tables.read_tables(answers, labels, gold, gold_format)
    result = analyze(rows, config=config, labels=labs, gold=gold_map)
    from snapaudit.report.summary import render_text  # the report layer, once there is a result

    click.echo(render_text(result, rows, labs), nl=False)
    if json_out is not None:
        from snapaudit.results import RunResults, write_results

        write_results(json_out, RunResults(result))
    if fail_on is not None:
        from snapaudit.cli.run import exit_on_verdict

        exit_on_verdict(result.verdict(), require_compatible=fail_on == "not-compatible")
