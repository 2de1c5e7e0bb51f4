"""The run-directory lock: one writing snapaudit command per run directory at a time.

An OS file lock (``fcntl.flock``) on ``DIR/.lock``, held for the life of the command that
writes (``run``, ``judge-audit``, ``run --forget-batch``). The file records the holder (pid,
host, command, start time) so that a second writer is told who holds the folder. The kernel
releases a flock when its process dies, so a lock file left by a killed run has no holder
and is simply taken over. Readers (``status``, ``report``, ``export``) take no lock.

Within one process a second writer on the same folder (a command that re-analyses the run it
holds) finds its own pid and host in the file and goes on under the outer holder's lock.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import shlex
import socket
import sys
import time
from pathlib import Path
from typing import Any

from snapaudit.errors import BusyError, StorageError

LOCK_NAME = ".lock"


def default_command() -> str:
    """How this process was started, as a user would type it."""
    argv = list(sys.argv)
    if not argv or Path(argv[0]).name in ("snapaudit", "-c", "__main__.py"):
        return shlex.join(["snapaudit", *argv[1:]])
    return shlex.join(argv)


class DirLock:
    """An exclusive lock on one run directory; :meth:`release` (or process death) frees it."""

    def __init__(self, folder: Path, command: str | None = None):
        self.path = folder / LOCK_NAME
        self.command = command or default_command()
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock or raise BusyError naming the holder; nested use in the process
        that holds it is allowed (see the module docstring)."""
        if self._fd is not None:
            return
        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise storage_error(self.path, exc) from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            for _ in range(20):  # the holder may be writing its details just now
                if holder:
                    break
                time.sleep(0.025)
                holder = _read_holder(fd)
            os.close(fd)
            if holder.get("pid") == os.getpid() and holder.get("host") == socket.gethostname():
                return  # this process already holds the folder (an outer command)
            raise BusyError(busy_message(self.path.parent, holder)) from None
        try:
            _write_holder(fd, {"pid": os.getpid(), "host": socket.gethostname(),
                               "command": self.command, "since": time.time()})
        except OSError as exc:
            os.close(fd)
            raise storage_error(self.path, exc) from exc
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)  # no holder any more; the kernel drops the flock on close
            os.close(fd)


def busy_message(folder: Path, holder: dict[str, Any]) -> str:
    since = holder.get("since")
    when = (time.strftime("%Y-%m-%d %H:%M:%S %Z", time.localtime(since))
            if isinstance(since, int | float) else "an unknown time")
    return (f"another snapaudit run (pid {holder.get('pid', '?')} on host "
            f"{holder.get('host', '?')}, `{holder.get('command', '?')}`, since {when}) holds "
            f"{folder}; wait for it or stop it")


def storage_error(path: Path, exc: OSError) -> StorageError | OSError:
    """A full disk or a read-only folder as a clear StorageError; other OSErrors as they are."""
    if exc.errno == errno.ENOSPC or exc.errno == errno.EDQUOT:
        return StorageError(f"{path}: no space left on the device; free space and re-run "
                            "(everything already recorded is kept)")
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return StorageError(f"{path}: cannot be written ({exc.strerror}); a read-only run "
                            "directory can be read (status, report, export) but not run")
    return exc


def _read_holder(fd: int) -> dict[str, Any]:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        data = json.loads(os.read(fd, 65536).decode("utf-8") or "{}")
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_holder(fd: int, holder: dict[str, Any]) -> None:
    body = (json.dumps(holder, sort_keys=True) + "\n").encode("utf-8")
    os.ftruncate(fd, 0)
    os.lseek(fd, 0, os.SEEK_SET)
    os.write(fd, body)
    os.fsync(fd)
