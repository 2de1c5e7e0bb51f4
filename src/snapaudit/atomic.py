"""Atomic file writes: a temp file in the same folder, fsync, rename over the target.

A kill (or a full disk) at any moment leaves either the old file or the new one, never a
partial or empty one. Every user-visible file snapaudit writes goes through here.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def replacing(path: str | Path) -> Iterator[Path]:
    """Yield a temp path next to ``path``; once the block succeeds, fsync it and rename it
    over ``path`` (then fsync the folder). On any error the temp file is removed and
    ``path`` is left as it was."""
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        yield tmp
        _fsync(tmp)
        os.replace(tmp, target)
    except OSError as exc:  # named by the file meant, not by the temp file
        tmp.unlink(missing_ok=True)
        raise OSError(exc.errno, exc.strerror, str(target)) from exc
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)


def write_text(path: str | Path, text: str, *, encoding: str = "utf-8",
               newline: str | None = None) -> Path:
    """``Path.write_text``, atomically."""
    target = Path(path)
    with replacing(target) as tmp, open(tmp, "w", encoding=encoding, newline=newline) as f:
        f.write(text)
    return target


def write_bytes(path: str | Path, data: bytes) -> Path:
    """``Path.write_bytes``, atomically."""
    target = Path(path)
    with replacing(target) as tmp:
        tmp.write_bytes(data)
    return target


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _fsync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # pragma: no cover - a platform without directory handles
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover - some filesystems refuse fsync on a folder
        pass
    finally:
        os.close(fd)
