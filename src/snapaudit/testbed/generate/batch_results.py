"""A provider batch's results, spooled to disk and read one request at a time.

A results file holds one JSON line per request: 100,000 requests of long answers are
hundreds of megabytes of JSON, several times that as Python objects. :class:`BatchResults`
therefore streams each file to a temporary file while downloading it (memory: one chunk),
then indexes it in one pass (custom id -> byte range of its line; each line is parsed and
dropped), and parses a request's line again only when :meth:`BatchResults.get` asks for it.
Unusable lines (not JSON, no string ``custom_id``) are skipped: their requests have no result
and are retried. A custom id seen twice keeps its last line. The temporary files go when
the results are closed (``with`` or :meth:`BatchResults.close`).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from typing import IO, Any

from snapaudit.errors import TransportInvalid
from snapaudit.systems.bounded import parse_json

# a request's result: the response body of a request that succeeded, or why it did not
Result = dict[str, Any] | TransportInvalid
Convert = Callable[[dict[str, Any]], Result]


class BatchResults:
    """The results of one batch, by custom id (files added with :meth:`add_file`)."""

    def __init__(self) -> None:
        self._files: list[IO[bytes]] = []
        self._converts: dict[int, Convert] = {}  # file number -> its line's converter
        self._where: dict[str, tuple[int, int, int]] = {}  # custom id -> (file, offset, size)

    def __enter__(self) -> BatchResults:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __len__(self) -> int:
        return len(self._where)

    def __contains__(self, custom_id: object) -> bool:
        return custom_id in self._where

    def spool(self) -> IO[bytes]:
        """A new temporary file to download one results file into (then :meth:`add_file`)."""
        f = tempfile.TemporaryFile(prefix="snapaudit-batch-")  # noqa: SIM115 (closed in close)
        self._files.append(f)
        return f

    def add_file(self, f: IO[bytes], convert: Convert) -> None:
        """Index a spooled results file; ``convert`` turns one of its lines into a result."""
        n = self._files.index(f)
        self._converts[n] = convert
        f.seek(0)
        offset = 0
        for line in f:
            size = len(line)
            custom_id = _custom_id(line)
            if custom_id is not None:
                self._where[custom_id] = (n, offset, size)
            offset += size

    def get(self, custom_id: str) -> Result | None:
        where = self._where.get(custom_id)
        if where is None:
            return None
        n, offset, size = where
        f = self._files[n]
        f.seek(offset)
        obj = parse_json(f.read(size))
        return self._converts[n](obj)

    def close(self) -> None:
        for f in self._files:
            f.close()
        self._files.clear()
        self._where.clear()


def _custom_id(line: bytes) -> str | None:
    if not line.strip():
        return None
    try:
        value = parse_json(line)
    except TransportInvalid:
        return None
    if isinstance(value, dict) and isinstance(value.get("custom_id"), str):
        return str(value["custom_id"])
    return None
