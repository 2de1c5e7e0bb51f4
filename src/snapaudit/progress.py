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


def _clock(seconds: float) -> str:
    s = max(0, round(seconds))
    if s >= 3600:
        return f"{s // 3600}:{s % 3600 // 60:02d}:{s % 60:02d}"
    return f"{s // 60}:{s % 60:02d}"


def rate_eta(done: int, total: int | None, elapsed: float) -> str:
    """``" (2.5/s, ETA 0:12)"``: the rate so far and the time left at that rate."""
    if done <= 0 or elapsed <= 0:
        return ""
    rate = done / elapsed
    shown = f"{rate:.1f}/s" if rate >= 1 else f"{60 * rate:.1f}/min"
    if total is None or done >= total:
        return f" ({shown}, {_clock(elapsed)} elapsed)"
    return f" ({shown}, ETA {_clock((total - done) / rate)})"


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
        self._start = 0.0

    def _write(self, line: str) -> None:
        self._stream.write(line + "\n")
        self._stream.flush()

    def stage(self, name: str, total: int | None = None) -> None:
        self._name, self._total, self._done = name, total, 0
        self._last = self._start = time.monotonic()
        self._write(f"[{name}] start" + (f" ({total})" if total is not None else ""))

    def advance(self, n: int = 1) -> None:
        self._done += n
        now = time.monotonic()
        finished = self._total is not None and self._done >= self._total
        if finished or now - self._last >= self._interval:
            self._last = now
            of = f"/{self._total}" if self._total is not None else ""
            self._write(f"[{self._name}] {self._done}{of}"
                        + rate_eta(self._done, self._total, now - self._start))

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
            ProgressColumn,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )
        from rich.progress import Progress as _RichBar
        from rich.text import Text

        class RateColumn(ProgressColumn):
            def render(self, task: Any) -> Text:
                speed = task.finished_speed or task.speed
                if not speed:
                    return Text("-/s")
                return Text(f"{speed:.1f}/s" if speed >= 1 else f"{60 * speed:.1f}/min")

        self._bar = _RichBar(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            RateColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
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
