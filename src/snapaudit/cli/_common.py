"""Options shared by several commands."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from snapaudit.errors import ConfigError
from snapaudit.progress import Progress, choose_progress

F = TypeVar("F", bound=Callable[..., Any])


def progress_option(func: F) -> F:
    """``--progress auto|rich|plain|silent``."""
    return click.option(
        "--progress",
        "progress_kind",
        type=click.Choice(["auto", "rich", "plain", "silent"]),
        default="auto",
        show_default=True,
        help="How to show progress (auto: a bar on a terminal, plain lines otherwise).",
    )(func)


def set_option(func: F) -> F:
    """``--set dotted.key=value`` protocol overrides, repeatable."""
    return click.option(
        "--set",
        "overrides",
        multiple=True,
        metavar="KEY=VALUE",
        help="Override a protocol field (dotted key; value parsed as TOML). Repeatable.",
    )(func)


def make_progress(kind: str) -> Progress:
    return choose_progress(kind)


def check_output_path(path: Path, option: str) -> None:
    """Refuse an output file whose folder does not exist (or is not a folder) before any work
    is done, naming the option."""
    parent = path.resolve().parent
    if not parent.is_dir():
        raise ConfigError(f"{option} {path}: folder {parent} does not exist")
    if path.is_dir():
        raise ConfigError(f"{option} {path}: is a folder, expected a file path")


def serve_until_stopped(url: str, serve_forever: Callable[[], object],
                        close: Callable[[], object], open_browser: bool) -> None:
    """Open ``url`` in the browser if asked, serve until Ctrl-C ("stopped"), then close."""
    if open_browser:
        import webbrowser

        webbrowser.open(url)
    try:
        serve_forever()
    except KeyboardInterrupt:
        click.echo("stopped")
    finally:
        close()
