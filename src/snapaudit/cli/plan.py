"""``snapaudit plan``: questions needed for a target power, from a pilot run."""

from __future__ import annotations

import json
from pathlib import Path

import click

from snapaudit import atomic
from snapaudit.cli._common import check_output_path, make_progress, progress_option
from snapaudit.errors import ConfigError
from snapaudit.run.after.pilot import pilot_from_run
from snapaudit.stats.gate import GateConfig, default_rules
from snapaudit.stats.plan import Pilot, mde, mde_json, plan, render_mde, render_text


def _counts(text: str, option: str = "--questions") -> list[int]:
    try:
        values = [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"{option} must be integers separated by commas, got {text!r}"
                          ) from None
    if not values or any(v < 1 for v in values):
        raise ConfigError(f"{option} needs at least one count >= 1")
    return values


def _components(pilot: Path, question_sd: float, path_sd: float | None
                ) -> tuple[dict[str, float], str]:
    """Variance components of the path-averaged D: the pilot's paths section, else the
    pilot's per-question SD and ``--path-sd``."""
    from snapaudit.results import read_results

    results = pilot / "results.json" if pilot.is_dir() else pilot
    section = read_results(results).paths if results.exists() else None
    if section is not None and path_sd is None:
        comps = section.kernels["exact"][1].components
        return ({k: float(v) for k, v in comps.items()},
                f"the pilot's {section.count} paths (exact kernel)")
    if path_sd is None:
        raise ConfigError("--paths with a one-path pilot needs --path-sd PP (the SD of the "
                          "path effect on D), or a pilot run with [testbed.paths]")
    if path_sd < 0:
        raise ConfigError(f"--path-sd must be >= 0, got {path_sd:g}")
    return ({"path_sd": path_sd, "question_sd": question_sd, "residual_sd": 0.0},
            "the pilot's per-question SD and --path-sd")


def _targets(text: str) -> list[float]:
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise ConfigError(f"--target-d must be numbers separated by commas, got {text!r}") from None
    if not values or any(v <= 0 for v in values):
        raise ConfigError("--target-d needs at least one positive D (pp)")
    return values


@click.command("plan")
@click.argument("pilot", type=click.Path(exists=True, path_type=Path))
@click.option("--target-d", default="3,6,10", show_default=True,
              help="Target true D values in pp, comma separated.")
@click.option("--power", type=float, default=0.8, show_default=True,
              help="Target power of the gate, between 0.5 and 1.")
@click.option("--questions", "questions",
              help="Also print the minimum detectable D at these question counts, e.g. "
                   "400,2000.")
@click.option("--repeats", type=int,
              help="Repeats r of the planned run; must equal the pilot's (sd(D_i) depends "
                   "on r).")
@click.option("--old", help="Old state (default: that of the pilot's results.json).")
@click.option("--new", help="New state (default: that of the pilot's results.json).")
@click.option("--judge", help="Judge of the semantic kernel (default: the run's primary).")
@click.option("--exact-only", is_flag=True,
              help="Plan only the gate's exact-kernel rules (a pilot run without a judge).")
@click.option("--paths", "paths",
              help="Also size K corpus paths and questions together for the path-averaged D "
                   "(testbed.paths), e.g. 3,5,10.")
@click.option("--path-sd", type=float,
              help="With --paths and a one-path pilot: the assumed SD of the path effect on "
                   "D (pp); a pilot with paths measures it.")
@click.option("--looks", type=int,
              help="Also simulate a sequential design of K looks (needs --margin): the "
                   "questions and answer calls it uses, and the share saved, at D = 0, M, 2M "
                   "and the pilot's own D beside the fixed design, over each --questions "
                   "count (default: the pilot's questions).")
@click.option("--margin", "margin_pp", type=float, metavar="PP",
              help="With --looks: the compatibility margin M (pp), as in analyze --margin.")
@click.option("--simulations", type=int, default=200, show_default=True,
              help="With --looks: simulated audits per D (the pilot's D_i, exponentially "
                   "tilted to each D; docs/analysis.md, 'Planning the looks').")
@click.option("--seed", type=int, default=0, show_default=True,
              help="With --looks: seed of the simulated audits.")
@progress_option
@click.option("--json", "json_out", type=click.Path(dir_okay=False, path_type=Path),
              help="Also write the plan as JSON here.")
def command(pilot: Path, target_d: str, power: float, questions: str | None,
            repeats: int | None, old: str | None, new: str | None, judge: str | None,
            exact_only: bool, paths: str | None, path_sd: float | None, looks: int | None,
            margin_pp: float | None, simulations: int, seed: int, progress_kind: str,
            json_out: Path | None) -> None:
    """Questions needed for POWER at each target D, from the per-question D_i of a pilot
    run (PILOT: a run directory or its results.json); with --questions, also the minimum
    detectable D at those sizes; with --looks K --margin M, the questions and calls a
    sequential design is expected to use. Clustered pilots include the design effect."""
    if json_out is not None:
        check_output_path(json_out, "--json")
    if not 0.5 < power < 1:
        raise ConfigError(f"--power must be between 0.5 and 1 (exclusive), got {power:g}")
    _check_sequential(looks, margin_pp, simulations)
    counts = _counts(questions) if questions is not None else None
    targets = _targets(target_d)
    measured = pilot_from_run(pilot, old=old, new=new, judge=judge)
    if repeats is not None and repeats != measured.repeats:
        raise ConfigError(f"the pilot has r = {measured.repeats}; sd(D_i) changes with r, so "
                          f"plan r = {repeats} from a pilot run at r = {repeats}")
    gate = None  # the pilot's own gate profile (stats.plan)
    if exact_only:
        gate = GateConfig(rules=tuple(r for r in default_rules() if r.kernel == "exact"))
    result = plan(measured, targets, power, gate)
    click.echo(render_text(result), nl=False)
    doc = result.to_json()
    if counts is not None:
        rows = mde(measured, counts, power)
        click.echo(render_mde(measured, rows, power), nl=False)
        doc["mde"] = mde_json(rows)
    if paths is not None:
        from snapaudit.stats.paths_plan import paths_json, paths_need, render_paths

        comps, source = _components(pilot, measured.sd_pp["exact"], path_sd)
        need = paths_need(comps, targets, _counts(paths, "--paths"), power)
        click.echo(render_paths(need, comps, power, source), nl=False)
        doc["paths"] = paths_json(need, comps, source)
    if looks is not None and margin_pp is not None:
        doc["sequential"] = _sequential(measured, gate, looks, margin_pp, counts, simulations,
                                        seed, progress_kind)
    if json_out is not None:
        atomic.write_text(json_out, json.dumps(doc, indent=2) + "\n")


def _check_sequential(looks: int | None, margin_pp: float | None, simulations: int) -> None:
    """One line for options the sequential plan cannot use, before the pilot is read."""
    if looks is None and margin_pp is None:
        return
    if looks is None or margin_pp is None:
        raise ConfigError("--looks K and --margin PP go together: the sequential plan "
                          "simulates D = 0, M and 2M with K looks")
    if looks < 1:
        raise ConfigError(f"--looks must be at least 1, got {looks}")
    if not 0 < margin_pp < 100:
        raise ConfigError(f"--margin must be above 0 and below 100 pp, got {margin_pp:g}")
    from snapaudit.stats.plan_sequential import MIN_SIMULATIONS

    if simulations < MIN_SIMULATIONS:
        raise ConfigError(f"--simulations must be at least {MIN_SIMULATIONS}, got "
                          f"{simulations}")


def _sequential(measured: Pilot, gate: GateConfig | None, looks: int, margin_pp: float,
                counts: list[int] | None, simulations: int, seed: int,
                progress_kind: str) -> list[dict[str, object]]:
    """The sequential plan over each planned size, printed; its JSON."""
    from dataclasses import replace

    from snapaudit.stats.plan_sequential import render_sequential, sequential_plan
    from snapaudit.stats.sequential import MIN_FIRST_BLOCK

    sizes = counts if counts is not None else [measured.questions]
    for n in sizes:
        if looks > 1 and n // looks < MIN_FIRST_BLOCK:
            source = "--questions" if counts is not None else "the pilot's question count"
            raise ConfigError(f"--looks {looks} over {n} planned questions ({source}) gives "
                              f"a first block of {n // looks}; each look needs at least "
                              f"{MIN_FIRST_BLOCK} (use at most {max(1, n // MIN_FIRST_BLOCK)}"
                              " looks, or plan more questions with --questions N)")
    with_margin = replace(gate or GateConfig(), margin_pp=margin_pp)
    progress = make_progress(progress_kind)
    docs = []
    try:
        for n in sizes:
            result = sequential_plan(measured, with_margin, looks, n, simulations, seed,
                                     progress)
            click.echo(render_sequential(result), nl=False)
            docs.append(result.to_json())
    finally:
        progress.close()
    return docs
