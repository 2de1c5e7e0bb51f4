"""``snapaudit init``: write a commented protocol template.

``--kind python --out audit.toml`` also writes, next to it, a stub pipeline
(``my_pipeline.py``) and eight sample questions with gold answers (``questions.jsonl``,
``gold.jsonl``), so that ``snapaudit run audit.toml`` works as written.
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
def command(kind: str, out: Path | None) -> None:
    """Write a commented protocol template (every key is documented in docs/protocol.md)."""
    text = template_text(kind)
    if out is None:
        click.echo(text, nl=False)
        return
    companions = [(out.parent / name, res) for name, res in COMPANIONS.get(kind, ())]
    taken = [p for p in [out, *(p for p, _ in companions)] if p.exists()]
    if taken:
        raise ConfigError("; ".join(f"{p} exists" for p in taken) + "; choose another --out")
    for path, res in companions:
        atomic.write_text(path, resource_text(res))
        click.echo(f"wrote {path}", err=True)
    atomic.write_text(out, text)
    click.echo(f"wrote {out}", err=True)
