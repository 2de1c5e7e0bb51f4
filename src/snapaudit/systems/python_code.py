"""What a Python system's answers depend on beyond its target function, bound into its spec.

* **Local modules**: every module the target reaches through its module's globals
  (``import helper``, ``from helper import f``, transitively) whose file lies under one of
  the system's roots (the protocol's folder, ``python_path``, the target's own package
  folder, never an installed ``site-packages``): name -> SHA-256 of its source file.
* **Modules imported at call time** (``from fmt import format_docs`` inside a function):
  what ``sys.modules`` gains from the same roots while the target runs
  (:func:`call_module`; recorded by the run before the answer is accepted,
  :mod:`snapaudit.run.bound_systems`).
* **Distributions**: the installed distributions those modules import (top-level package ->
  :func:`importlib.metadata.packages_distributions`): name -> version. The standard library
  and snapaudit itself (its version is bound by the run's ``code_version``) are left out.
* **Files** (``bind_files``): index and model files or folders, relative to the protocol's
  folder: path -> ``{"bytes", "sha256"}``, hashed streamed; a folder binds every file under it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from snapaudit.errors import ConfigError
from snapaudit.hashing import sha256_file

_SITE = ("site-packages", "dist-packages")


def _module_file(module: ModuleType) -> Path | None:
    path = getattr(module, "__file__", None)
    return Path(path).resolve() if isinstance(path, str) else None


def _under(path: Path, roots: Sequence[Path]) -> bool:
    if any(p in _SITE for p in path.parts):
        return False
    return any(path.is_relative_to(root) for root in roots)


def _referenced(module: ModuleType) -> set[str]:
    """Names of the modules ``module``'s globals come from."""
    out: set[str] = set()
    for value in list(vars(module).values()):
        if isinstance(value, ModuleType):
            out.add(value.__name__)
        else:
            try:
                origin = getattr(value, "__module__", None)
            except Exception:  # a proxy object whose attributes raise
                continue
            if isinstance(origin, str):
                out.add(origin)
    out.discard(module.__name__)
    return out


def target_roots(module_name: str, extra: Iterable[Path]) -> list[Path]:
    """The folders whose modules count as the target's own code."""
    roots = [p.resolve() for p in extra]
    top = sys.modules.get(module_name.split(".")[0])
    path = _module_file(top) if top is not None else None
    if path is not None:
        roots.append(path.parent)  # a module's folder, or a package's own folder
    return [r for r in roots if not any(p in _SITE for p in r.parts)]


def _walk(module_name: str, roots: Sequence[Path]) -> tuple[dict[str, Path], set[str]]:
    """The local modules ``module_name`` reaches (name -> file) and the top-level names of
    the other modules it reaches."""
    files: dict[str, Path] = {}
    tops: set[str] = set()
    todo, seen = [module_name], {module_name}
    while todo:
        name = todo.pop()
        module = sys.modules.get(name)
        path = _module_file(module) if module is not None else None
        if (module is None or path is None or name.split(".")[0] == "snapaudit"
                or not _under(path, roots)):
            tops.add(name.split(".")[0])
            continue
        files[name] = path
        for ref in sorted(_referenced(module) - seen):
            seen.add(ref)
            todo.append(ref)
    return files, tops


def local_modules(module_name: str, roots: Sequence[Path]) -> list[str]:
    """The names of the local modules the module ``module_name`` (already imported) reaches,
    itself included."""
    return sorted(_walk(module_name, roots)[0])


def imported_code(module_name: str, roots: Sequence[Path]) -> dict[str, dict[str, str]]:
    """``{"modules": {name: sha256}, "distributions": {name: version}}`` of the target
    module ``module_name`` (already imported) and everything local it reaches."""
    files, tops = _walk(module_name, roots)
    modules = {name: sha256_file(path) for name, path in files.items()}
    return {"modules": dict(sorted(modules.items())), "distributions": distributions(tops)}


def call_module(name: str, file: str, roots: Sequence[Path],
                base_dir: Path | None) -> dict[str, str] | None:
    """A module a call imported, as bound: ``{"path", "sha256"}`` (the path relative to the
    protocol's folder when under it), or None when it is not the project's own code."""
    path = Path(file).resolve()
    if name.split(".")[0] == "snapaudit" or not path.is_file() or not _under(path, roots):
        return None
    shown = path
    if base_dir is not None and path.is_relative_to(base_dir.resolve()):
        shown = path.relative_to(base_dir.resolve())
    return {"path": shown.as_posix(), "sha256": sha256_file(path)}


def distributions(tops: Iterable[str]) -> dict[str, str]:
    from importlib.metadata import packages_distributions, version

    skip = set(sys.stdlib_module_names) | {"snapaudit", "builtins", "__main__"}
    wanted = sorted(t for t in set(tops) if t and t not in skip and not t.startswith("_"))
    if not wanted:
        return {}
    known = packages_distributions()
    out: dict[str, str] = {}
    for top in wanted:
        for dist in known.get(top) or []:
            if dist.lower() == "snapaudit":
                continue
            try:
                out[dist] = version(dist)
            except Exception:  # metadata of a broken install: the next name
                continue
    return dict(sorted(out.items()))


class CallImports:
    """What one state's calls imported beyond its spec: the project's modules
    (:func:`call_module`) and the installed distributions of the others; each reported once
    by :meth:`observe`."""

    def __init__(self, roots: Sequence[Path], base_dir: Path | None):
        self._roots, self._base_dir = roots, base_dir
        self.modules: dict[str, dict[str, str]] = {}
        self.distributions: dict[str, str] = {}
        self._tops: set[str] = set()

    def observe(self, gained: Iterable[tuple[str, str]]) -> dict[str, dict[str, Any]]:
        """The new ``{"modules": {name: {"path", "sha256"}}, "distributions": {name:
        version}}`` among the modules ``gained`` (``(name, file)``); empty when none."""
        modules: dict[str, Any] = {}
        tops: set[str] = set()
        for name, file in gained:
            if name in self.modules:
                continue
            entry = call_module(name, file, self._roots, self._base_dir)
            if entry is not None:
                modules[name] = self.modules[name] = entry
            elif name.split(".")[0] not in self._tops:
                tops.add(name.split(".")[0])
        self._tops |= tops
        dists = {k: v for k, v in distributions(tops).items() if k not in self.distributions}
        self.distributions.update(dists)
        return {k: v for k, v in (("modules", modules), ("distributions", dists)) if v}


def bound_files(paths: Sequence[str], base_dir: Path | None) -> dict[str, dict[str, Any]]:
    """``bind_files``: path as written -> ``{"bytes", "sha256"}`` (a folder: per file)."""
    out: dict[str, dict[str, Any]] = {}
    for written in paths:
        path = Path(written)
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        if path.is_dir():
            files = sorted(p for p in path.rglob("*") if p.is_file())
            for f in files:
                out[f"{written.rstrip('/')}/{f.relative_to(path).as_posix()}"] = _file(f)
        elif path.is_file():
            out[written] = _file(path)
        else:
            raise ConfigError(f"bind_files: {written!r} does not exist ({path})")
    return out


def _file(path: Path) -> dict[str, Any]:
    return {"bytes": path.stat().st_size, "sha256": sha256_file(path)}
