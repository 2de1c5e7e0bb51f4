"""The review server: one annotator's session of one run, on 127.0.0.1 only.

:func:`open_review` is the one library function ``snapaudit review`` calls: it validates the
:class:`ReviewConfig`, opens the review session (which refuses a bad annotator name or a run
whose answers and labels are not locked) and binds a :class:`ReviewServer` on a free port
(or the one asked for). The caller runs ``serve_forever()`` and then :meth:`ReviewServer.close`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from snapaudit.errors import ConfigError
from snapaudit.names import NAME_RULE, is_name
from snapaudit.review.data import Mode, ReviewData, Session, open_library_session
from snapaudit.review.handlers import HOST, ReviewServer
from snapaudit.review.refresh import ResultsUpdater, update_results


@dataclass(frozen=True, slots=True)
class ReviewConfig:
    """What ``snapaudit review`` serves: a run, an annotator, the mode, the port."""

    run_dir: Path
    annotator: str
    label: bool = False          # label mode (blind pairs) instead of the change review
    sample: int | None = None    # label mode: questions in the outcome-blind sample
    port: int = 0                # 0: any free port

    def check(self) -> None:
        if not is_name(self.annotator):
            raise ConfigError(f"--annotator {self.annotator!r} {NAME_RULE}")
        if self.sample is not None and not self.label:
            raise ConfigError("--sample applies to --label only")
        if self.sample is not None and self.sample < 1:
            raise ConfigError(f"--sample {self.sample}: must be at least 1")
        if not 0 <= self.port <= 65535:
            raise ConfigError(f"--port {self.port}: must be 0-65535")


def serve_data(data: ReviewData, port: int = 0) -> ReviewServer:
    """A server over ``data``; closes ``data`` when the port cannot be bound."""
    try:
        return ReviewServer(data, port)
    except OSError as exc:
        data.close()
        raise ConfigError(f"--port {port}: cannot listen on {HOST}:{port} ({exc.strerror})"
                          ) from None


def open_review(config: ReviewConfig,
                opener: Callable[[Path, str, int | None], Session] = open_library_session,
                update: Callable[[Path], object] | None = update_results) -> ReviewServer:
    """The review session of ``config`` served on 127.0.0.1 (not yet serving). ``update``:
    what a label lock or a decision runs on the run directory (on a thread of its own; by
    default :func:`~snapaudit.review.refresh.update_results`: results.json and the report);
    None for none."""
    config.check()
    mode: Mode = "label" if config.label else "change"
    updater = None if update is None else partial(ResultsUpdater, config.run_dir, update)
    data = ReviewData(lambda: opener(config.run_dir, config.annotator, config.sample),
                      mode=mode, annotator=config.annotator, updater=updater)
    try:
        data.items()  # what the page will ask first: refused now, before a URL is printed
    except BaseException:
        data.close()
        raise
    return serve_data(data, config.port)
