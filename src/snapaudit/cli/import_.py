"""``snapaudit import``: answer tables from inspect_ai, promptfoo or lm-eval logs."""

from __future__ import annotations

from pathlib import Path

import click

from snapaudit.errors import ConfigError
from snapaudit.tables.foreign import TOOLS, Imported, import_logs, write_import


def _states(values: tuple[str, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for value in values:
        name, sep, key = value.partition("=")
        if not sep or not name or not key:
            raise ConfigError(f"--state {value!r}: expected NAME=LOG (or NAME=LABEL)")
        out[key] = name
    return out


@click.command("import")
@click.argument("tool", type=click.Choice(TOOLS))
@click.argument("logs", nargs=-1, required=True,
                type=click.Path(exists=True, dir_okay=False))
@click.option("--out", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Folder for answers.jsonl, gold.jsonl and provenance.json.")
@click.option("--format", "fmt", type=click.Choice(["jsonl", "parquet"]), default="jsonl",
              show_default=True, help="Format of the answers and gold tables (Parquet for "
                                      "tables over ~10^5 rows).")
@click.option("--state", "state", multiple=True,
              help="NAME=LOG or NAME=LABEL (a model or provider label); repeatable. Without "
                   "it the log names the state.")
@click.option("--state-from", type=click.Choice(["model", "task-version"]), default="model",
              show_default=True, help="inspect: name states by eval.model or task version.")
@click.option("--doc-ids-key", default="retrieved_context_ids", show_default=True,
              help="inspect sample metadata/store key (and a tool result's, for steps), "
                   "promptfoo response.metadata key.")
@click.option("--id-var", default="id", show_default=True, help="promptfoo: var of the id.")
@click.option("--target-var", default="target", show_default=True,
              help="promptfoo: var of the gold answer.")
@click.option("--allow-errors", is_flag=True,
              help="Leave questions with an errored call out of every state (listed in "
                   "provenance.json) instead of refusing.")
@click.option("--analyze", "run_analysis", is_flag=True,
              help="Then run `snapaudit analyze` on the written tables (--old vs --new; "
                   "DIR/results.json).")
@click.option("--old", help="With --analyze: the old state.")
@click.option("--new", help="With --analyze: the new state.")
@click.option("--draws", type=int, default=50_000, show_default=True,
              help="With --analyze: bootstrap draws.")
@click.option("--seed", type=int, default=0, show_default=True,
              help="With --analyze: bootstrap seed.")
@click.pass_context
def command(ctx: click.Context, tool: str, logs: tuple[str, ...], out: Path, fmt: str,
            state: tuple[str, ...], state_from: str, doc_ids_key: str, id_var: str,
            target_var: str, allow_errors: bool, run_analysis: bool, old: str | None,
            new: str | None, draws: int, seed: int) -> None:
    """Import TOOL's LOGS (inspect, promptfoo or lm-eval) as snapaudit answer tables."""
    if run_analysis and not (old and new):
        raise ConfigError("--analyze needs --old and --new")
    imported = import_logs(tool, list(logs), states=_states(state), allow_errors=allow_errors,
                           state_from=state_from, doc_ids_key=doc_ids_key, id_var=id_var,
                           target_var=target_var)
    paths = write_import(out, imported, fmt)
    for line in _state_lines(imported) + _left_out_lines(imported, paths["provenance"]):
        click.echo(line, err=True)
    states = sorted({row.state for row in imported.rows})
    click.echo(f"imported {len(imported.rows)} answers of states {', '.join(states)} into "
               f"{paths['answers']}", err=True)
    if run_analysis:  # exactly `snapaudit analyze` on the tables just written
        from snapaudit.cli.analyze import command as analyze

        ctx.invoke(analyze, answers=paths["answers"], gold=paths.get("gold"),
                   gold_format="auto", old=old, new=new, draws=draws, seed=seed,
                   json_out=out / "results.json")


def _state_lines(imported: Imported) -> list[str]:
    """How each state was named from the logs, where the name is not the label itself."""
    return [f"state {name} <- {' + '.join(labels)}"
            for name, labels in sorted(imported.states.items()) if labels != [name]]


def _left_out_lines(imported: Imported, provenance: Path, most: int = 10) -> list[str]:
    errored = imported.provenance["errored_calls"]
    if not errored:
        return []
    gone = imported.provenance["excluded_questions"]
    lines = [f"left out {len(gone)} question(s) of every state for {len(errored)} errored "
             f"call(s) (--allow-errors; all listed in {provenance}):"]
    lines += [f"  question {e['question_id']!r} repeat {e['repeat']} of state {e['state']!r}: "
              f"{e['error']}" for e in errored[:most]]
    if len(errored) > most:
        lines.append(f"  ... and {len(errored) - most} more")
    return lines
