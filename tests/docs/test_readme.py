"""The README's commands stay true to the CLI and the repository.

Every ``snapaudit`` command of a ``bash`` block of README.md (and CONTRIBUTING.md), and every
``snapaudit ...`` code span of the README's text, is parsed by the command's own click parser:
an unknown command or option, a value outside a choice, a missing required option or argument,
or an extra argument fails here. Every file of the repository a command names
(``examples/...``, ``bench/...``) exists, and every extra a ``pip install`` names is one of
pyproject.toml's. Lines 4 and 5 are the two commands ``.ci/run`` reads by line number.
"""

from __future__ import annotations

import glob
import tomllib
from pathlib import Path

import click
import pytest

from snapaudit.cli import cli
from tests.helpers.markdown import inline_commands, shell_commands

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "CONTRIBUTING.md"]
REPO_DIRS = ("examples/", "bench/", "scripts/", "tests/", "docs/")


def _commands(name: str) -> list[list[str]]:
    return [c for page in PAGES for c in shell_commands(page)
            if Path(c[0]).name == name]


def _inline(name: str) -> list[list[str]]:
    """The command lines the README's text shows in code spans (placeholders included)."""
    return list(inline_commands(ROOT / "README.md", name))


def _parse(args: list[str]) -> str:
    """Parse ``args`` (after ``snapaudit``) as the CLI would, without running anything;
    returns the command path. Raises click.UsageError on a command line the CLI refuses."""
    command: click.Command = cli
    ctx = click.Context(cli, info_name="snapaudit")
    path = "snapaudit"
    while True:
        opts, rest, _ = command.make_parser(ctx).parse_args(list(args))
        for param in command.params:
            value = opts.get(param.name or "")
            missing = value is None or param.value_is_missing(value)
            if param.required and missing:
                raise click.UsageError(f"{path}: missing {param.human_readable_name}")
            if isinstance(param.type, click.Choice) and not missing:
                for one in value if isinstance(value, list | tuple) else [value]:
                    param.type.convert(one, param, ctx)
        if not isinstance(command, click.Group):
            if rest:
                raise click.UsageError(f"{path}: unexpected extra arguments {rest}")
            return path
        if not rest:
            raise click.UsageError(f"{path}: no command")
        sub = command.get_command(ctx, rest[0])
        if sub is None:
            raise click.UsageError(f"{path}: no such command {rest[0]!r}")
        path, args = f"{path} {rest[0]}", rest[1:]
        command, ctx = sub, click.Context(sub, info_name=rest[0], parent=ctx)


def test_the_readme_shows_commands() -> None:
    shown = {_parse(c[1:]) for c in _commands("snapaudit")}
    # the five uses: analyze, import, init/run/status/report/view/export/verify, the testbed
    assert {"snapaudit analyze", "snapaudit import", "snapaudit run", "snapaudit init",
            "snapaudit corpus build", "snapaudit verify"} <= shown, shown


@pytest.mark.parametrize("command", _commands("snapaudit") + _inline("snapaudit"), ids=" ".join)
def test_every_command_parses(command: list[str]) -> None:
    _parse(command[1:])


def test_the_parser_refuses_what_the_cli_refuses() -> None:
    # the check above can fail: each of these is a command line the CLI refuses
    for bad in (["analyze", "--answers", "a", "--old", "x"],           # --new missing
                ["analyze", "--answers", "a", "--old", "x", "--new", "y", "--frob"],
                ["run", "p.toml", "--fail-on", "sometimes"],
                ["export", "runs/a", "--out", "x", "extra"],
                ["corpus", "shrink", "x"], ["status"]):
        with pytest.raises(click.UsageError):
            _parse(bad)


def test_files_the_commands_name_exist() -> None:
    named = [w for page in PAGES for c in shell_commands(page) for w in c
             if w.startswith(REPO_DIRS) and "$" not in w]
    assert len(named) >= 10
    missing = [w for w in named if not glob.glob(str(ROOT / w))]
    assert not missing, missing


def test_pip_extras_exist() -> None:
    extras = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
                 ["optional-dependencies"])
    asked = {e for page in PAGES for c in shell_commands(page) if Path(c[0]).name == "pip"
             for w in c if w.startswith(".[") for e in w[2:-1].split(",")}
    assert {"local", "dev", "dense"} <= asked
    assert asked <= extras, asked - extras


def test_ci_reads_the_two_commands_by_line() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert lines[3].startswith("python3 -m venv .venv && ") and lines[3].endswith(
        "&& .venv/bin/snapaudit demo")
    assert lines[4] == ".venv/bin/pip install -e '.[dev]' && .venv/bin/python -m pytest -q"
