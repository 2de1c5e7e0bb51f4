"""One registry pattern: a kind name -> a factory named ``"module:attr"``, imported lazily.

Every pluggable family (systems, generator backends, batch providers, judges, retrievers)
is a ``Registry``: the module behind a kind, and the optional SDK it needs, are imported only
when a thing of that kind is built. An unknown kind names the known ones; a failed import
names the extra (or package) that provides it.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from snapaudit.errors import ConfigError

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Entry:
    """One kind: its factory ``"module:attr"`` (None: a kind that builds nothing) and the
    pip extra that provides its SDK. A family may subclass it with its kinds' capabilities."""

    target: str | None
    extra: str | None = None


class Registry(Generic[T]):
    """``kind -> factory`` for one family; ``what`` names it in errors ("generator backend")."""

    def __init__(self, what: str, entries: Mapping[str, str | Entry]) -> None:
        self.what = what
        self._entries = {kind: e if isinstance(e, Entry) else Entry(e)
                         for kind, e in entries.items()}

    def __contains__(self, kind: object) -> bool:
        return kind in self._entries

    def __iter__(self) -> Iterator[str]:
        return iter(self._entries)

    def kinds(self) -> tuple[str, ...]:
        return tuple(self._entries)

    def entry(self, kind: str) -> Entry:
        try:
            return self._entries[kind]
        except KeyError:
            known = ", ".join(repr(k) for k in self._entries)
            raise ConfigError(f"unknown {self.what} {kind!r} (known: {known})") from None

    def factory(self, kind: str) -> Callable[..., T]:
        """The factory of ``kind``, importing its module now."""
        entry = self.entry(kind)
        if entry.target is None:
            raise ConfigError(f"{self.what} {kind!r} builds nothing")
        module_name, _, attr = entry.target.partition(":")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            missing = exc.name or str(exc)
            if missing.split(".")[0] == "snapaudit" and missing != module_name:
                raise  # a bug in snapaudit itself, not a missing package
            hint = (f"pip install 'snapaudit[{entry.extra}]'" if entry.extra
                    else f"install the package {missing!r}")
            raise ConfigError(f"{self.what} {kind!r} needs the package {missing!r}, which is "
                              f"not installed ({hint})") from exc
        made: Callable[..., T] = getattr(module, attr)
        return made

    def build(self, kind: str, *args: Any, **kwargs: Any) -> T:
        """A new thing of ``kind``: ``factory(kind)(*args, **kwargs)``."""
        return self.factory(kind)(*args, **kwargs)
