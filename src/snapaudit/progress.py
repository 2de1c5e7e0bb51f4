"""Progress reporting: one small interface, three implementations.

Library code never prints; it reports to a :class:`Progress` it is handed.
The CLI chooses :class:`RichProgress` on a terminal, :class:`PlainProgress`
otherwise, and :class:`SilentProgress` for ``--quiet`` and in tests.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Protocol, TextIO


class Progress(Protocol):
    """Where library code reports what it is doing."""

    def stage(self, name: str, total: int | None = None) -> None:
        """A new stage begins, with ``total`` units of work if known."""

    def advance(self, n: int = 1) -> None:
        """``n`` units of the current stage are done."""

    def info(self, message: str) -> None:
        """A one-line message worth showing to the user."""

    def close(self) -> None:
        """The work is over; release the terminal."""


class SilentProgress:
    """Reports nothing."""

    def stage(self, name: str, total: int | None = None) -> None:
        return None

    def advance(self, n: int = 1) -> None:
        return None

    def info(self, message: str) -> None:
        return None

    def close(self) -> None:
        return None


class PlainProgress:
    """Plain lines, at most one per ``interval`` seconds per stage; for logs and CI."""

    def __init__(self, stream: TextIO | None = None, interval: float = 5.0):
        self._stream = stream if stream is not None else sys.stderr
        self._interval = interval
        self._name = ""
        self._total: int | None = None
        self._done = 0
        self._last = 0.0

    def _write(self, line: str) -> None:
        self._stream.write(line + "\n")
        self._stream.flush()

    def stage(self, name: str, total: int | None = None) -> None:
        self._name, self._total, self._done = name, total, 0
        self._last = time.monotonic()
        self._write(f"[{name}] start" + (f" ({total})" if total is not None else ""))

    def advance(self, n: int = 1) -> None:
        self._done += n
        now = time.monotonic()
        finished = self._total is not None and self._done >= self._total
        if finished or now - self._last >= self._interval:
            self._last = now
            of = f"/{self._total}" if self._total is not None else ""
            self._write(f"[{self._name}] {self._done}{of}")

    def info(self, message: str) -> None:
        self._write(message)

    def close(self) -> None:
        return None


class RichProgress:
    """A progress bar per stage on a terminal (rich)."""

    def __init__(self) -> None:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            TextColumn,
            TimeElapsedColumn,
        )
        from rich.progress import Progress as _RichBar

        self._bar = _RichBar(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            transient=False,
        )
        self._bar.start()
        self._task: Any = None

    def stage(self, name: str, total: int | None = None) -> None:
        self._task = self._bar.add_task(name, total=total)

    def advance(self, n: int = 1) -> None:
        if self._task is not None:
            self._bar.advance(self._task, n)

    def info(self, message: str) -> None:
        self._bar.console.print(message, markup=False, highlight=False)

    def close(self) -> None:
        self._bar.stop()


def choose_progress(kind: str = "auto") -> Progress:
    """``auto`` picks rich on a terminal and plain lines otherwise."""
    if kind == "silent":
        return SilentProgress()
    if kind == "plain" or (kind == "auto" and not sys.stderr.isatty()):
        return PlainProgress()
    return RichProgress()
