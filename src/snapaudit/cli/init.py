"""``snapaudit init``: write a commented protocol template."""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

import click

from snapaudit import atomic
from snapaudit.errors import ConfigError


def template_text(kind: str) -> str:
    return files("snapaudit.cli.templates").joinpath(f"{kind}.toml").read_text(encoding="utf-8")


@click.command("init")
@click.option("--kind", type=click.Choice(["http", "testbed"]), default="http", show_default=True,
              help="The kind of system under audit.")
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Write here instead of standard output (never overwrites).")
def command(kind: str, out: Path | None) -> None:
    """Write a commented protocol template (every key is documented in docs/protocol.md)."""
    text = template_text(kind)
    if out is None:
        click.echo(text, nl=False)
        return
    if out.exists():
        raise ConfigError(f"{out} exists; choose another --out")
    atomic.write_text(out, text)
    click.echo(f"wrote {out}", err=True)
