"""Readers of other evaluation tools' logs (inspect_ai, promptfoo, lm-evaluation-harness)
into snapaudit's answer tables: ``snapaudit import``. See docs/import.md for the mapping.

Each tool is an entry of :data:`IMPORT_TOOLS` (the project's :class:`~snapaudit.registry.
Registry`): its reader ``(path, ReadOptions) -> Source``, imported only when that tool is
read; a tool that needs an optional package names its extra.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from snapaudit.registry import Entry, Registry
from snapaudit.tables.foreign.common import (
    Call,
    Imported,
    ReadOptions,
    Source,
    assemble,
    write_import,
)

IMPORT_TOOLS: Registry[Source] = Registry("import tool", {
    "inspect": Entry("snapaudit.tables.foreign.inspect_log:read_inspect", extra="inspect"),
    "promptfoo": "snapaudit.tables.foreign.promptfoo_log:read_promptfoo",
    "lm-eval": "snapaudit.tables.foreign.lmeval_log:read_lmeval",
})
TOOLS = IMPORT_TOOLS.kinds()


def read_sources(tool: str, paths: Sequence[str],
                 options: ReadOptions | None = None) -> list[Source]:
    """One :class:`Source` per log file of ``tool``."""
    read = IMPORT_TOOLS.factory(tool)
    return [read(path, options or ReadOptions()) for path in paths]


def import_logs(tool: str, paths: Sequence[str], *, states: Mapping[str, str] | None = None,
                allow_errors: bool = False, **options: str) -> Imported:
    """Read ``paths`` of ``tool`` and assemble answer rows, gold and provenance;
    ``options``: the fields of :class:`ReadOptions`."""
    return assemble(read_sources(tool, paths, ReadOptions(**options)), states=states,
                    allow_errors=allow_errors)


__all__ = ["IMPORT_TOOLS", "TOOLS", "Call", "Imported", "ReadOptions", "Source", "assemble",
           "import_logs", "read_sources", "write_import"]
