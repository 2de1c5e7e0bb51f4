"""docs/architecture.md stays true: its package map names every module of the library.

Each row of the map's table names modules in its first column by their path under
``src/snapaudit`` (``stats/kernels``); a bare name after a path is a sibling of that path
(``stats/kernels``, ``matrices`` = ``stats/matrices``). Every module outside ``cli/``,
``demo/`` and ``report/`` (package ``__init__`` files aside) must be named; a name with no
module yet (one about to be merged) is allowed.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src" / "snapaudit"
DOC = ROOT / "docs" / "architecture.md"
UNMAPPED = ("cli", "demo", "report")


def _map_rows(text: str) -> list[str]:
    section = text.split("## Package map", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("|")]
    return [row.split("|")[1] for row in rows[2:]]  # past the header and its rule


def names_in_map(text: str) -> set[str]:
    named: set[str] = set()
    for cell in _map_rows(text):
        folder = ""
        for token in re.findall(r"`([^`]+)`", cell):
            token = token.removesuffix(".py").rstrip("/*")
            if "/" in token:
                folder = token.rpartition("/")[0]
                named.add(token)
            else:
                named.add(f"{folder}/{token}" if folder else token)
    return named


def library_modules() -> set[str]:
    return {p.relative_to(SRC).with_suffix("").as_posix() for p in SRC.rglob("*.py")
            if p.name != "__init__.py" and p.relative_to(SRC).parts[0] not in UNMAPPED}


def test_every_module_is_in_the_map() -> None:
    modules = library_modules()
    assert len(modules) > 100  # the walk found the package
    missing = sorted(modules - names_in_map(DOC.read_text(encoding="utf-8")))
    assert not missing, ("modules not named in docs/architecture.md's package map:\n  "
                         + "\n  ".join(missing))


def test_the_map_parser_can_fail() -> None:
    doc = ("## Package map\n\n| module | owns |\n|---|---|\n"
           "| `errors` | x |\n| `stats/kernels`, `matrices` | y |\n| `run/record/ledger/` | z |\n"
           "\n## Next\n| `stats/churn` | not in the map |\n")
    assert names_in_map(doc) == {"errors", "stats/kernels", "stats/matrices",
                                 "run/record/ledger"}
    assert "stats/churn" not in names_in_map(doc)
