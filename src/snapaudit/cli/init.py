"""``snapaudit init``: write a commented protocol template.

``--kind python --out audit.toml`` also writes, next to it, a stub pipeline
(``my_pipeline.py``) and eight sample questions with gold answers (``questions.jsonl``,
``gold.jsonl``), so that ``snapaudit run audit.toml`` works as written. Nothing is ever
overwritten: when some of those files exist, nothing is written and the message names them
and the way out (``--keep-existing`` keeps them and writes only what is missing).
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import click

from snapaudit import atomic
from snapaudit.errors import ConfigError

# kind -> (written file name, template resource) of the files written next to --out
COMPANIONS: dict[str, tuple[tuple[str, str], ...]] = {
    "python": (("my_pipeline.py", "python_pipeline.py.txt"),
               ("questions.jsonl", "python_questions.jsonl"),
               ("gold.jsonl", "python_gold.jsonl")),
}


def template_text(kind: str) -> str:
    return resource_text(f"{kind}.toml")


def resource_text(name: str) -> str:
    return files("snapaudit.cli.templates").joinpath(name).read_text(encoding="utf-8")


@click.command("init")
@click.option("--kind", type=click.Choice(["http", "testbed", "python"]), default="http",
              show_default=True, help="The kind of system under audit.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write here instead of standard output (never overwrites). With --kind "
                   "python also a stub pipeline and sample data next to it.")
@click.option("--keep-existing", "keep", is_flag=True,
              help="With --kind python: keep the pipeline and sample files that already exist "
                   "next to --out (your own) and write only the missing ones.")
def command(kind: str, out: Path | None, keep: bool = False) -> None:
    """Write a commented protocol template (every key is documented in docs/protocol.md)."""
    text = template_text(kind)
    if out is None:
        click.echo(text, nl=False)
        return
    if out.exists():
        raise ConfigError(f"{out} exists (init never overwrites): choose another --out")
    companions = [(out.parent / name, res) for name, res in COMPANIONS.get(kind, ())]
    taken = [p for p, _ in companions if p.exists()]
    if taken and not keep:
        raise ConfigError(
            f"{_names(taken)} already exist{'s' if len(taken) == 1 else ''} in "
            f"{out.parent.resolve()} (init --kind {kind} writes a stub pipeline and sample "
            "data next to --out); nothing was written. Pass --keep-existing to keep them and "
            "write only what is missing, or give an --out in another folder.")
    for path, res in companions:
        if path in taken:
            click.echo(f"kept {path} (it exists; {out.name} names it)", err=True)
            continue
        atomic.write_text(path, resource_text(res))
        click.echo(f"wrote {path}", err=True)
    atomic.write_text(out, text)
    click.echo(f"wrote {out}", err=True)


def _names(paths: list[Path]) -> str:
    names = [p.name for p in paths]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
