"""What the verifier checks of an artifact before it opens anything in it.

An artifact is untrusted input. :func:`check_tree` walks it with ``lstat`` only (nothing is
opened or followed) and refuses symbolic links (to files or directories), anything but
regular files and directories, and names outside the name rule
(:mod:`snapaudit.names`). :func:`entry_path` turns a name the artifact itself states (a
manifest entry, a stage's ledger file) into a path and refuses an absolute path, a ``..``
or empty component, a component outside the name rule, a symbolic link on the way and
anything that resolves outside the artifact root. :func:`load_json` and :func:`load_jsonl`
refuse JSON nested deeper than :data:`MAX_DEPTH` before decoding and turn every decoder
failure (an integer over Python's digit limit included) into a message. Each refusal is a
:class:`~snapaudit.errors.VerificationError` (exit 3) naming the entry.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from snapaudit.errors import VerificationError
from snapaudit.names import NAME_RULE, is_name
from snapaudit.systems.bounded import json_depth_exceeds

MAX_DEPTH = 64


def check_tree(root: Path) -> list[str]:
    """Every regular file under ``root`` (POSIX relative paths, sorted); VerificationError
    listing each symbolic link, special file or badly named entry."""
    problems: list[str] = []
    files: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        for name in sorted([*dirnames, *filenames]):
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix()
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                problems.append(f"entry {rel!r}: a symbolic link (refused, not followed)")
            elif not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                problems.append(f"entry {rel!r}: not a regular file or directory")
            elif not is_name(name):
                problems.append(f"entry {rel!r}: its name {NAME_RULE}")
            elif stat.S_ISREG(mode):
                files.append(rel)
        dirnames[:] = [d for d in dirnames if not Path(dirpath, d).is_symlink()]
    if problems:
        raise VerificationError(problems)
    return sorted(files)


def entry_problem(root: Path, name: object) -> str | None:
    """Why ``name`` is not a safe relative path inside ``root`` (None when it is)."""
    if not isinstance(name, str) or not name:
        return f"entry {name!r}: not a relative path"
    if name.startswith("/") or "\\" in name or (len(name) > 1 and name[1] == ":"):
        return f"entry {name!r}: an absolute path (refused)"
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts):
        return f"entry {name!r}: an empty, '.' or '..' component (refused)"
    bad = [p for p in parts if not is_name(p)]
    if bad:
        return f"entry {name!r}: component {bad[0]!r} {NAME_RULE}"
    current = root
    for part in parts:
        current = current / part
        if current.is_symlink():
            return f"entry {name!r}: {current.relative_to(root).as_posix()!r} is a symbolic link"
    if not current.resolve().is_relative_to(root.resolve()):
        return f"entry {name!r}: resolves outside the artifact (refused)"
    return None


def entry_path(root: Path, name: str) -> Path:
    """``root / name`` once :func:`entry_problem` has nothing to say."""
    problem = entry_problem(root, name)
    if problem is not None:
        raise VerificationError([problem])
    return root.joinpath(*name.split("/"))


def _decode(text: str | bytes, where: str) -> Any:
    if json_depth_exceeds(text.encode() if isinstance(text, str) else text, MAX_DEPTH):
        raise VerificationError([f"{where}: JSON nested deeper than {MAX_DEPTH} levels"])
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:  # syntax, encoding, digit limit
        reason = exc.msg if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise VerificationError([f"{where}: not usable JSON ({reason[:120]})"]) from None


def load_json(root: Path, name: str) -> Any:
    """The JSON document ``name`` of the artifact, checked as above."""
    return _decode(entry_path(root, name).read_bytes(), f"file {name}")


def load_jsonl(root: Path, name: str, *, missing_ok: bool = True) -> list[Any]:
    """The JSON lines of ``name`` (empty when absent and ``missing_ok``)."""
    path = entry_path(root, name)
    if missing_ok and not path.exists():
        return []
    try:
        lines = path.read_bytes().decode("utf-8").splitlines()
    except UnicodeDecodeError:
        raise VerificationError([f"file {name}: not valid UTF-8"]) from None
    return [_decode(line, f"file {name} line {n}") for n, line in enumerate(lines, 1) if line]


def stage_content(root: Path, stage: str) -> dict[str, str]:
    """What ``Ledger.content_hashes(stage)`` gave, recomputed from the exported rows."""
    from snapaudit.hashing import sha256_json

    name = stage.replace(":", "_")
    cells = load_jsonl(root, f"ledger/{name}.cells.jsonl")
    attempts = load_jsonl(root, f"ledger/{name}.attempts.jsonl")
    return {"accepted_sha256": sha256_json([[c["cell_key"], sha256_json(c["payload"])]
                                            for c in cells]),
            "cells_sha256": sha256_json([[c["cell_key"], c["attempt_id"], c["payload"]]
                                         for c in cells]),
            "n_cells": str(len(cells)),
            "attempts_sha256": sha256_json([row[1:] for row in attempts]),
            "n_attempts": str(len(attempts))}
