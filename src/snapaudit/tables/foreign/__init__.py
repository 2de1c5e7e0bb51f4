"""Readers of other evaluation tools' logs (inspect_ai, promptfoo, lm-evaluation-harness)
into snapaudit's answer tables: ``snapaudit import``. See docs/import.md for the mapping."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from snapaudit.tables.foreign.common import Call, Imported, Source, assemble, write_import

TOOLS = ("inspect", "promptfoo", "lm-eval")


def read_sources(tool: str, paths: Sequence[str], *, state_from: str = "model",
                 doc_ids_key: str = "retrieved_context_ids", id_var: str = "id",
                 target_var: str = "target") -> list[Source]:
    """One :class:`Source` per log file of ``tool``."""
    if tool == "inspect":
        from snapaudit.tables.foreign.inspect_log import read_inspect

        return [read_inspect(p, state_from=state_from, doc_ids_key=doc_ids_key) for p in paths]
    if tool == "promptfoo":
        from snapaudit.tables.foreign.promptfoo_log import read_promptfoo

        return [read_promptfoo(p, id_var=id_var, target_var=target_var,
                               doc_ids_key=doc_ids_key) for p in paths]
    if tool == "lm-eval":
        from snapaudit.tables.foreign.lmeval_log import read_lmeval

        return [read_lmeval(p) for p in paths]
    raise ValueError(f"unknown tool {tool!r}")


def import_logs(tool: str, paths: Sequence[str], *, states: Mapping[str, str] | None = None,
                allow_errors: bool = False, **options: str) -> Imported:
    """Read ``paths`` of ``tool`` and assemble answer rows, gold and provenance."""
    return assemble(read_sources(tool, paths, **options), states=states,
                    allow_errors=allow_errors)


__all__ = ["TOOLS", "Call", "Imported", "Source", "assemble", "import_logs", "read_sources",
           "write_import"]
